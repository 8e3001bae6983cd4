import { randomUUID } from 'node:crypto';
import { access, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { parseProgressLine } from '../../crds/contract/progress-lines.ts';
import type { ResultOf, StepOf } from '../../crds/contract/programs.ts';
import { JobFailure } from '../../job-images/lib/job-failure.ts';
import type { AnyJobProgram, JobContext, JobProgram } from '../../job-images/lib/job-program.ts';
import { runJob } from '../../job-images/lib/run-job.ts';
import { startJobBucket } from './job-process.ts';
import type { JobBucket } from './job-process.ts';

/**
 * A stand-in for the `proxy` program (its registry entry gives the input schema and the
 * steps) whose behaviour each test chooses, to pin what the runtime does around it.
 */
function echoProgram(behaviour: (ctx: JobContext<StepOf<'proxy'>>) => Promise<object>): JobProgram<'proxy'> {
  return {
    name: 'proxy',
    run: async (spec, ctx) => ({ word: spec.input.sourceKey, ...(await behaviour(ctx)) }) as unknown as ResultOf<'proxy'>,
  };
}

/** What a failed run reports, as error.json holds it (code and params only when it has them). */
function failureOf(file: { code: string | null; params: Record<string, string | number> | null; message: string }) {
  return { message: file.message, ...(file.code ? { code: file.code } : {}), ...(file.params ? { params: file.params } : {}) };
}

describe('job runtime (job-images/lib/run-job.ts)', () => {
  let bucket: JobBucket;
  let scratch: string;
  before(async () => {
    bucket = await startJobBucket();
  });
  after(async () => {
    await bucket.close();
  });
  beforeEach(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'cutroom-runtime-test-'));
  });
  afterEach(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  /** Runs the runtime in process: its stdout lines (each a progress report), and what it wrote and logged when it failed. */
  async function runWith(program: AnyJobProgram, spec: { outputPrefix?: string | undefined } | undefined, extraEnv: Record<string, string> = {}) {
    const lines: string[] = [];
    const logged: string[] = [];
    const exitCode = await runJob({
      programs: [program],
      env: { ...bucket.env, ...(spec ? { CUTROOM_JOB_SPEC: JSON.stringify(spec) } : {}), ...extraEnv },
      writeLine: (line) => lines.push(line),
      log: { info: () => {}, warn: () => {}, error: (_message, fields) => logged.push(String(fields?.['error'])) },
    });
    const progress = lines.map((line) => parseProgressLine(line.trimEnd()));
    expect(progress.every((line) => line !== null), 'every stdout line is a progress report').to.equal(true);
    const prefix = spec?.outputPrefix?.replace(/\/+$/, '');
    const errorFile = prefix && (await bucket.exists(`${prefix}/error.json`)) ? ((await bucket.getJson(`${prefix}/error.json`)) as Parameters<typeof failureOf>[0]) : undefined;
    return { exitCode, progress, failure: errorFile ? failureOf(errorFile) : undefined, logged: logged.at(-1) };
  }

  const jobId = randomUUID();
  const spec = (overrides: object = {}) => ({
    jobId,
    program: 'proxy',
    userId: randomUUID(),
    input: { sourceKey: 'hello', contentType: 'video/mp4' },
    // a prefix of its own: error.json of an earlier run never answers for a later one
    outputPrefix: `jobs/${randomUUID()}/`,
    ...overrides,
  });

  it('success: result.json under the output prefix (the one outcome; stdout carries progress only), exit code 0', async () => {
    const program = echoProgram(async (ctx) => {
      ctx.progress.report('process', 0.5, 12.4);
      return { key: ctx.outputKey('thing.txt') };
    });
    const { exitCode, progress } = await runWith(program, spec({ outputPrefix: 'jobs/job-1/' }));
    expect(exitCode).to.equal(0);
    // half of `process`, whose slice of the job is [20, 95] in the registry; the time left as a whole number
    expect(progress).to.deep.equal([{ event: 'progress', step: 'process', progress: 58, eta_seconds: 12 }]);
    expect(await bucket.getJson('jobs/job-1/result.json')).to.deep.equal({ word: 'hello', key: 'jobs/job-1/thing.txt' });
  });

  it('the program gets a private work dir that is removed after success and after failure', async () => {
    const seen: string[] = [];
    const program = echoProgram(async (ctx) => {
      seen.push(ctx.workDir);
      await writeFile(join(ctx.workDir, 'temp.bin'), 'x');
      if (seen.length === 2) throw new JobFailure('second run fails');
      return {};
    });
    expect((await runWith(program, spec())).exitCode).to.equal(0);
    expect((await runWith(program, spec())).exitCode).to.equal(1);
    for (const dir of seen) {
      await access(dir).then(
        () => expect.fail(`${dir} still exists`),
        () => {},
      );
    }
  });

  it('failure: error.json with the human message, exit code 1, no result.json', async () => {
    const program = echoProgram(async () => {
      throw new JobFailure('The source is not a video');
    });
    const { exitCode, failure, progress } = await runWith(program, spec({ outputPrefix: 'jobs/failing' }));
    expect(exitCode).to.equal(1);
    expect(failure).to.deep.equal({ message: 'The source is not a video' });
    expect(progress, 'no outcome on stdout').to.deep.equal([]);
    expect(await bucket.exists('jobs/failing/result.json')).to.equal(false);
  });

  it('an unexpected error is reported as an internal error with its message', async () => {
    const program = echoProgram(async () => {
      throw new TypeError('cannot read properties of undefined');
    });
    const { failure } = await runWith(program, spec());
    expect(failure).to.deep.equal({ message: 'Internal error in the job program: cannot read properties of undefined' });
  });

  it('the failure message is written to the termination log when that file exists', async () => {
    const terminationLog = join(scratch, 'termination-log');
    await writeFile(terminationLog, '');
    const program = echoProgram(async () => {
      throw new JobFailure('The source is not a video');
    });
    await runWith(program, spec(), { CUTROOM_TERMINATION_LOG: terminationLog });
    expect(await readFile(terminationLog, 'utf8')).to.equal('The source is not a video');
  });

  it('the termination log is never created where none exists', async () => {
    const terminationLog = join(scratch, 'absent-termination-log');
    const failing = echoProgram(async () => {
      throw new JobFailure('The source is not a video');
    });
    const { exitCode } = await runWith(failing, spec(), { CUTROOM_TERMINATION_LOG: terminationLog });
    expect(exitCode, 'a failed run, which writes the log where it exists').to.equal(1);
    await access(terminationLog).then(
      () => expect.fail('termination log was created'),
      () => {},
    );
  });

  it('a missing CUTROOM_JOB_SPEC fails with a clear message (logged: there is no prefix to write error.json under)', async () => {
    const { exitCode, logged } = await runWith(echoProgram(async () => ({})), undefined);
    expect(exitCode).to.equal(1);
    expect(logged).to.equal('CUTROOM_JOB_SPEC is not set: the job has no spec');
  });

  it('an invalid spec names the offending field', async () => {
    const { exitCode, logged } = await runWith(echoProgram(async () => ({})), { ...spec(), outputPrefix: undefined });
    expect(exitCode).to.equal(1);
    expect(logged).to.match(/^Invalid job spec: .*outputPrefix/s);
  });

  it('an unknown program names the programs this image runs', async () => {
    const { failure } = await runWith(echoProgram(async () => ({})), spec({ program: 'render' }));
    expect(failure).to.deep.equal({ message: 'Unknown program "render": this image runs proxy' });
  });

  it("input that fails the program's schema fails before the program runs", async () => {
    let ran = false;
    const program = echoProgram(async () => {
      ran = true;
      return {};
    });
    const { failure } = await runWith(program, spec({ input: { sourceKey: 42, contentType: 'video/mp4' } }));
    expect(ran).to.equal(false);
    expect(failure?.message).to.match(/^Invalid input for program "proxy": .*sourceKey/s);
  });

  it('missing S3 settings fail as a job configuration error', async () => {
    const logged: string[] = [];
    const exitCode = await runJob({
      programs: [echoProgram(async () => ({}))],
      env: { CUTROOM_JOB_SPEC: JSON.stringify(spec()) },
      writeLine: () => {},
      log: { info: () => {}, warn: () => {}, error: (_message, fields) => logged.push(String(fields?.['error'])) },
    });
    expect(exitCode).to.equal(1);
    expect(logged).to.deep.equal(['Job configuration: S3_BUCKET is required']);
  });

  it('service-raised messages go through the catalogs: a JobFailure\'s code and params are in error.json', async () => {
    const program = echoProgram(async () => {
      throw new JobFailure('The uploaded object "k" is empty (0 bytes)', { code: 'media.empty', params: { size: 0 } });
    });
    const { exitCode } = await runWith(program, spec({ outputPrefix: 'jobs/coded/' }));
    expect(exitCode).to.equal(1);
    expect(await bucket.getJson('jobs/coded/error.json')).to.deep.equal({ code: 'media.empty', params: { size: 0 }, message: 'The uploaded object "k" is empty (0 bytes)' });
  });

  it('timeoutSeconds aborts the program with a time-limit message', async () => {
    const program = echoProgram(
      (ctx) =>
        new Promise((_resolve, reject) => {
          ctx.signal.addEventListener('abort', () => reject(new Error('aborted')));
        }),
    );
    const { failure } = await runWith(program, spec({ timeoutSeconds: 1 }));
    expect(failure).to.deep.equal({ message: 'The job did not finish within its time limit of 1 s', code: 'job.timed_out', params: { seconds: 1 } });
  });

  it('SIGTERM aborts the program and reports that it was stopped', async () => {
    const program = echoProgram(
      (ctx) =>
        new Promise((_resolve, reject) => {
          ctx.signal.addEventListener('abort', () => reject(new Error('aborted')));
          setImmediate(() => process.emit('SIGTERM', 'SIGTERM'));
        }),
    );
    const { failure } = await runWith(program, spec());
    expect(failure).to.deep.equal({ message: 'The job was stopped (SIGTERM) before it finished', code: 'job.cancelled' });
  });
});
