/**
 * The words `audio_censorship` mutes or bleeps, per transcript language (docs/decisions.md
 * "Exports" lists them). A word matches after lower-casing, dropping accents and the
 * punctuation around it; an entry ending in `*` matches every word starting with it.
 * A transcript in another language (or none detected) is checked against all three lists.
 */
const CENSORED_WORDS: Readonly<Record<'en' | 'pt' | 'es', readonly string[]>> = {
  en: ['fuck*', 'motherfuck*', 'shit*', 'bullshit*', 'bitch*', 'asshole*', 'bastard*', 'cunt*', 'dick', 'dickhead*', 'piss', 'pissed', 'cock', 'cocks', 'wanker*', 'twat*', 'damn', 'goddamn*', 'crap', 'crappy', 'slut*', 'whore*'],
  pt: ['porra*', 'caralho*', 'merda*', 'foda*', 'foder*', 'fodase', 'fodido*', 'puta*', 'puto*', 'cacete*', 'buceta*', 'cu', 'viado*', 'arrombado*', 'babaca*', 'desgraçado*', 'filho-da-puta', 'bosta*'],
  es: ['mierda*', 'joder*', 'jodido*', 'coño*', 'puta*', 'puto*', 'cabrón*', 'cabron*', 'gilipollas', 'pendejo*', 'chingar*', 'chingada*', 'culero*', 'verga*', 'carajo*', 'hostia*', 'maricón*', 'cojones'],
};

const plain = (word: string) =>
  word
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');

interface Matcher {
  exact: Set<string>;
  prefixes: string[];
}

function matcherOf(entries: readonly string[]): Matcher {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const entry of entries) {
    if (entry.endsWith('*')) prefixes.push(plain(entry.slice(0, -1)));
    else exact.add(plain(entry));
  }
  return { exact, prefixes };
}

const matchers = Object.fromEntries(Object.entries(CENSORED_WORDS).map(([language, words]) => [language, matcherOf(words)])) as Record<keyof typeof CENSORED_WORDS, Matcher>;

/** The censor check for a transcript's language (ISO 639-1, region ignored); unknown or null: every list. */
export function censoredWordTest(language: string | null): (word: string) => boolean {
  const code = language?.slice(0, 2).toLowerCase();
  const active = code && Object.hasOwn(matchers, code) ? [matchers[code as keyof typeof matchers]] : Object.values(matchers);
  return (word) => {
    const candidate = plain(word);
    if (candidate === '') return false;
    return active.some((matcher) => matcher.exact.has(candidate) || matcher.prefixes.some((prefix) => candidate.startsWith(prefix)));
  };
}
