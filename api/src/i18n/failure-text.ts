import { catalogs } from './catalogs.ts';
import { fillPlaceholders } from './format.ts';
import type { Locale, MessageParams } from './index.ts';

/**
 * A job failure in `locale`, by its stable code (`failure.<code>` in any feature's
 * catalog); an unknown or missing code gives the fallback text (the program's English).
 */
export function failureText(locale: Locale, code: string | null | undefined, params: MessageParams | null | undefined, fallback: string): string {
  if (!code) return fallback;
  const key = `failure.${code}` as keyof (typeof catalogs)['en'];
  if (!Object.hasOwn(catalogs.en, key)) return fallback;
  return fillPlaceholders(catalogs[locale][key] ?? catalogs.en[key], params ?? {});
}
