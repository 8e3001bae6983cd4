// The peer of the end-to-end part (issue 35): auto-editor (auto-editor/auto-editor.ts) at its
// defaults, cutting by loudness with its 0.2 s margins, on the same rendering of a talk the
// analyze program hears, its cut list put in the shape of the program's edits so that
// scoreAnalysis (hack/fixtures/recorded-analysis.ts) scores both alike.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TalkAnalysis } from '../../hack/fixtures/recorded-analysis.ts';
import { autoEditorCuts, type PeerOptions } from './auto-editor/auto-editor.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Makes auto-editor's virtual environment (.venv-peer) with auto-editor/setup.sh, a no-op when
 * the lock is unchanged; what it says goes to stderr, the bench's stdout stays its own.
 */
export async function ensurePeer(): Promise<void> {
  const child = spawn('bash', [join(ROOT, 'bench/analysis-robustness/auto-editor/setup.sh')], { cwd: ROOT, stdio: ['ignore', 2, 2] });
  const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
  if (code !== 0) throw new Error(`bench/analysis-robustness/auto-editor/setup.sh failed (${signal ?? `exit ${code}`}): auto-editor's virtual environment is not there`);
}

/**
 * auto-editor's cuts of the rendered talk at `path` as an analysis: each removed span an
 * active silence edit (whole ms, within the talk; it removes pauses, and a cut into speech
 * is one whatever its kind), no words (its word error rate and false starts mean nothing),
 * its edit run's wall time as the analysis time.
 */
export async function peerAnalysis(path: string, durationMs: number, options: PeerOptions = {}): Promise<TalkAnalysis> {
  const peer = await autoEditorCuts(path, options);
  const edits = peer.cuts
    .map((cut) => ({ start_ms: Math.max(0, Math.round(cut.startMs)), end_ms: Math.min(Math.round(durationMs), Math.round(cut.endMs)) }))
    .filter((cut) => cut.end_ms > cut.start_ms)
    .map((cut) => ({ type: 'silence' as const, ...cut, active: true, reason: `auto-editor: silent for ${((cut.end_ms - cut.start_ms) / 1000).toFixed(2)} s` }));
  return { seconds: peer.elapsedMs / 1000, recognizerSeconds: 0, edits, words: [], weak: false };
}
