import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Page } from 'playwright-core';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '../..');

/** The studio's bundle, built when missing or older than its sources (hack/studio.sh --if-stale). */
export async function ensureStudioBuilt(): Promise<void> {
  await run('bash', [join(ROOT, 'hack/studio.sh'), '--if-stale'], { cwd: ROOT, timeout: 180_000 });
}

/** Where the studio tests keep their screenshots (printed by the tests, kept after the run). */
export const SCREENSHOT_DIR = process.env.STUDIO_SCREENSHOT_DIR || join(ROOT, '.data/test-screenshots/studio');

/** The width and height a PNG's header gives. */
export function pngSize(png: Buffer): { width: number; height: number } {
  if (png.subarray(1, 4).toString('latin1') !== 'PNG') throw new Error('not a PNG');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

/** A screenshot of the viewport (or the whole page) under SCREENSHOT_DIR; returns its path and size. */
export async function screenshot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<{ path: string; width: number; height: number; bytes: number }> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  const png = await page.screenshot({ fullPage: options.fullPage ?? false });
  await writeFile(path, png);
  console.log(`      screenshot: ${path}`);
  return { path, ...pngSize(png), bytes: png.length };
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: number;
}

let axeSource: string | undefined;

/**
 * An accessibility scan of the page with axe-core (WCAG 2 A and AA rules and its best
 * practices). Its source goes in through the DevTools protocol, which the page's CSP does not govern.
 */
export async function axeScan(page: Page): Promise<AxeViolation[]> {
  axeSource ??= await readFile(join(ROOT, 'node_modules/axe-core/axe.min.js'), 'utf8');
  // one expression: axe's source, then the run (its result is what the page hands back)
  const run = `axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } })
    .then((result) => result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length })))`;
  return page.evaluate(`${axeSource}\n;${run}`) as Promise<AxeViolation[]>;
}

/** The serious and critical ones: what the studio may not have. */
export const serious = (violations: AxeViolation[]) => violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');

/** Retries `check` until it stops throwing (an assertion about what the page or the api shows now); its last error after `timeoutMs`. */
export async function settled<T>(check: () => T | Promise<T>, timeoutMs = 30_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  }
}

/** Sets a range input the way a drag of its thumb does: the value, then an input event. */
export async function setRange(page: Page, selector: string, value: number): Promise<void> {
  await page.locator(selector).evaluate((input, next) => {
    const range = input as unknown as { value: string; dispatchEvent(event: Event): boolean };
    range.value = String(next);
    range.dispatchEvent(new Event('input', { bubbles: true }));
  }, value);
}

let progressWatchers = 0;

/** Every value a progress bar whose label starts with `labelPrefix` shows from now on, in order (the list fills as the page runs). */
export async function watchProgress(page: Page, labelPrefix: string): Promise<number[]> {
  const values: number[] = [];
  const name = `studioProgress${++progressWatchers}`;
  await page.exposeFunction(name, (value: number) => void values.push(value));
  await page.evaluate(
    ({ name, labelPrefix }) => {
      const w = globalThis as unknown as PageGlobals & Record<string, (value: number) => void>;
      new w.MutationObserver(() => {
        const bar = w.document.querySelector(`[role=progressbar][aria-label^="${labelPrefix}"]`);
        if (bar) w[name]!(Number(bar.getAttribute('aria-valuenow')));
      }).observe(w.document.body, { subtree: true, attributes: true, childList: true });
    },
    { name, labelPrefix },
  );
  return values;
}

/** The few browser globals the tests' page-side functions use (the tests compile without the DOM library). */
export interface PageGlobals {
  document: {
    querySelector(selector: string): (PageVideo & { getAttribute(name: string): string | null }) | null;
    documentElement: { scrollWidth: number };
    body: unknown;
  };
  innerWidth: number;
  performance: { now(): number };
  MutationObserver: new (callback: () => void) => { observe(target: unknown, options: object): void };
}

export interface PageVideo {
  currentTime: number;
  readyState: number;
  networkState: number;
  error: { code: number } | null;
  paused: boolean;
  play(): Promise<void>;
  pause(): void;
  addEventListener(type: string, listener: () => void, options?: { once: boolean }): void;
}
