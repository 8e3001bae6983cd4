import { z } from 'zod';
import { catalogs, type MessageKey } from './catalogs.ts';
import { fillPlaceholders } from './format.ts';

export type Locale = keyof typeof catalogs;
export const LOCALES = Object.keys(catalogs) as Locale[];
export const DEFAULT_LOCALE: Locale = 'en';
export type { MessageKey };

export type MessageParams = Record<string, string | number>;

function isLocale(value: string): value is Locale {
  return Object.hasOwn(catalogs, value);
}

/** The catalog message in `locale` (en when missing), placeholders filled. */
export function translate(locale: Locale, key: MessageKey, params: MessageParams = {}): string {
  return fillPlaceholders(catalogs[locale][key] ?? catalogs[DEFAULT_LOCALE][key], params);
}

/**
 * Picks the best catalog for an Accept-Language header (RFC 9110 §12.5.4):
 * highest q first, `pt-BR` matches `pt`, `*` and unknown tags fall back to en.
 */
export function negotiateLocale(header: string | undefined, supported: readonly Locale[] = LOCALES): Locale {
  if (!header) return DEFAULT_LOCALE;
  const ranges = header
    .split(',')
    .map((part, index) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
      const weight = q ? Number(q.slice(2)) : 1;
      return { tag: tag.trim().toLowerCase(), weight: Number.isFinite(weight) ? weight : 0, index };
    })
    .filter((range) => range.tag && range.weight > 0)
    .sort((a, b) => b.weight - a.weight || a.index - b.index);
  for (const { tag } of ranges) {
    const primary = tag.split('-')[0] ?? '';
    if (isLocale(primary) && supported.includes(primary)) return primary;
  }
  return DEFAULT_LOCALE;
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
