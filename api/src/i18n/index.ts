import { z } from 'zod';
import { catalogs } from './catalogs.ts';
import { fillPlaceholders } from './format.ts';
import { DEFAULT_LOCALE, type Locale, type MessageParams } from './locales.ts';
import type { MessageKey } from './message-key.ts';

export { DEFAULT_LOCALE, LOCALES, negotiateLocale, type Locale, type MessageParams } from './locales.ts';
export type { MessageKey };

/** The catalog message in `locale` (en when missing), placeholders filled. */
export function translate(locale: Locale, key: MessageKey, params: MessageParams = {}): string {
  return fillPlaceholders(catalogs[locale][key] ?? catalogs[DEFAULT_LOCALE][key], params);
}

/** zod's own issue messages, in the caller's language. */
const zodLocales = { en: z.locales.en(), pt: z.locales.pt(), es: z.locales.es() } satisfies Record<Locale, unknown>;

export function zodErrorMap(locale: Locale) {
  return zodLocales[locale].localeError;
}

/**
 * A schema's own check message as a catalog key, for the router to translate
 * (localizedIssueMessage): `.regex(pattern, issueKey('validation.integer'))`, or with
 * params on a refinement, `{ error: issueKey('validation.at_most_flags'), params: { max: 16 } }`.
 */
export function issueKey(key: MessageKey): string {
  return key;
}

/** An issue's message in `locale`: a catalog key (issueKey) translated with the issue's params, zod's own message as it is. */
export function localizedIssueMessage(locale: Locale, issue: { message: string; params?: Record<string, unknown> }): string {
  if (!Object.hasOwn(catalogs.en, issue.message)) return issue.message;
  const params = Object.fromEntries(
    Object.entries(issue.params ?? {}).filter((entry): entry is [string, string | number] => typeof entry[1] === 'string' || typeof entry[1] === 'number'),
  );
  return translate(locale, issue.message as MessageKey, params);
}
