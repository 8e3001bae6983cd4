// Paths under /studio/, in the address bar (the api answers every one with the studio's page,
// so a reload or an e-mailed link lands where it should).
import { useEffect, useState } from 'preact/hooks';

export const BASE = '/studio';

const listeners = new Set<() => void>();

export function navigate(path: string, replace = false): void {
  const target = `${BASE}${path}`;
  if (replace) history.replaceState(null, '', target);
  else history.pushState(null, '', target);
  for (const listener of listeners) listener();
}

addEventListener('popstate', () => {
  for (const listener of listeners) listener();
});

/** The path after /studio and the query, re-read on every navigation. */
export function useRoute(): { path: string; params: URLSearchParams } {
  const [, setTick] = useState(0);
  useEffect(() => {
    const listener = () => setTick((tick) => tick + 1);
    listeners.add(listener);
    return () => void listeners.delete(listener);
  }, []);
  const path = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) || '/' : '/';
  return { path: path.replace(/\/+$/, '') || '/', params: new URLSearchParams(location.search) };
}

/** An in-app link: a real href (open in a new tab works), navigation without a reload. */
export function linkProps(path: string) {
  return {
    href: `${BASE}${path}`,
    onClick: (event: MouseEvent) => {
      if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
      event.preventDefault();
      navigate(path);
    },
  };
}
