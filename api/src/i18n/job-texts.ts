import { fillPlaceholders } from './format.ts';
import type { Locale, MessageParams } from './locales.ts';
import { jobTexts } from './messages/job-texts.ts';

type JobTextKey = keyof (typeof jobTexts)['en'];

/** A text a job writes (messages/job-texts.ts) in `locale`, placeholders filled. */
export function jobText(locale: Locale, key: JobTextKey, params: MessageParams = {}): string {
  return fillPlaceholders(jobTexts[locale][key], params);
}

/**
 * A job failure in `locale`, by its stable code (`failure.<code>` in messages/job-texts.ts);
 * an unknown or missing code gives the fallback text (the program's English).
 */
export function failureText(locale: Locale, code: string | null | undefined, params: MessageParams | null | undefined, fallback: string): string {
  if (!code) return fallback;
  const key = `failure.${code}`;
  if (!Object.hasOwn(jobTexts.en, key)) return fallback;
  return jobText(locale, key as JobTextKey, params ?? {});
}
