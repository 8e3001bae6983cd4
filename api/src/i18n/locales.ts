/** The languages the catalogs are written in; en is the fallback. */
export const LOCALES = ['en', 'pt', 'es'] as const;
export type Locale = (typeof LOCALES)[number];
export const DEFAULT_LOCALE: Locale = 'en';

export type MessageParams = Record<string, string | number>;

function isLocale(value: string): value is Locale {
  return (LOCALES as readonly string[]).includes(value);
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
