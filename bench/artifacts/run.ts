/**
 * Artifact program efficiency: its wall time against the cheapest honest baseline,
 * `ffprobe` plus one full `ffmpeg -i X -f null -` decode, measured in the same run on
 * the same files. Target: at most 1.5× the baseline for web-compatible video.
 *
 *   node bench/artifacts/run.ts            (BENCH_RUNS=3 by default; the median counts)
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { FFMPEG_IMAGE_MAIN, runProgram, startJobBucket } from '../../hack/fixtures/job-program.ts';
import { makeAudio, makeH264Video } from '../../hack/fixtures/bench-media.ts';

const TARGET_RATIO = 1.5;
const runs = Number(process.env.BENCH_RUNS ?? 3);
const run = promisify(execFile);

async function seconds(action: () => Promise<unknown>): Promise<number> {
  const started = process.hrtime.bigint();
  await action();
  return Number(process.hrtime.bigint() - started) / 1e9;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

async function baseline(path: string): Promise<number> {
  return seconds(async () => {
    await run('ffprobe', ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', path]);
    await run('ffmpeg', ['-hide_banner', '-nostdin', '-v', 'error', '-i', path, '-f', 'null', '-']);
  });
}

const dir = await mkdtemp(join(tmpdir(), 'cutroom-bench-artifacts-'));
const bucket = await startJobBucket();
try {
  process.stdout.write(`making inputs in ${dir} (${cpus().length} CPUs)…\n`);
  const inputs = [
    {
      name: '1-minute 1080p H.264/AAC MP4 (web-compatible)',
      key: 'bench/web-1080p.mp4',
      contentType: 'video/mp4',
      path: await makeH264Video(dir, 'web-1080p.mp4', { width: 1920, height: 1080, seconds: 60, fps: 30, preset: 'veryfast' }),
      gated: true,
    },
    {
      name: '10-minute AAC audio (M4A)',
      key: 'bench/audio-10min.m4a',
      contentType: 'audio/mp4',
      path: await makeAudio(dir, 'audio-10min.m4a', { seconds: 600 }),
      gated: false,
    },
  ];

  let failed = false;
  const results: string[] = [];
  for (const input of inputs) {
    await bucket.putFile(input.key, input.path, input.contentType);
    const baselineTimes: number[] = [];
    const programTimes: number[] = [];
    for (let attempt = 0; attempt < runs; attempt += 1) {
      baselineTimes.push(await baseline(input.path));
      const outcome = await runProgram(
        FFMPEG_IMAGE_MAIN,
        {
          jobId: randomUUID(),
          program: 'artifact',
          userId: randomUUID(),
          input: { sourceKey: input.key, contentType: input.contentType },
          outputPrefix: `bench/out/${input.key}`,
        },
        bucket.env,
      );
      if (outcome.exitCode !== 0) throw new Error(`artifact program failed on ${input.name}: exit code ${outcome.exitCode}\n${outcome.stderr}`);
      programTimes.push(outcome.wallSeconds);
    }
    const base = median(baselineTimes);
    const program = median(programTimes);
    const ratio = program / base;
    const verdict = input.gated ? (ratio <= TARGET_RATIO ? `ok (target ≤ ${TARGET_RATIO}×)` : `OVER TARGET (≤ ${TARGET_RATIO}×)`) : 'informational';
    if (input.gated && ratio > TARGET_RATIO) failed = true;
    if (input.gated) results.push(`RESULT artifact_time_ratio_${input.key.replace(/\W+/g, '_')} ${ratio.toFixed(2)} (target <= ${TARGET_RATIO}) ${ratio <= TARGET_RATIO ? 'ok' : 'miss'}`);
    const megabytes = (await stat(input.path)).size / 1e6;
    process.stdout.write(
      [
        `\n${input.name}, ${megabytes.toFixed(1)} MB, median of ${runs}`,
        `  baseline (ffprobe + ffmpeg -f null decode): ${base.toFixed(2)} s   [${baselineTimes.map((t) => t.toFixed(2)).join(', ')}]`,
        `  artifact program (S3 in and out):           ${program.toFixed(2)} s   [${programTimes.map((t) => t.toFixed(2)).join(', ')}]`,
        `  ratio: ${ratio.toFixed(2)}×  ${verdict}\n`,
      ].join('\n'),
    );
  }
  // the RESULT lines last, in the DESIGN form
  for (const line of results) console.log(line);
  process.exitCode = failed ? 1 : 0;
} finally {
  await bucket.close();
  await rm(dir, { recursive: true, force: true });
}
