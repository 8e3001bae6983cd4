import { randomUUID } from 'node:crypto';
import { access, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { z } from 'zod';
import { parseJobEvent } from '../../crds/contract/job-events.ts';
import type { JobEvent } from '../../crds/contract/job-events.ts';
import { JobFailure } from '../../job-images/lib/job-failure.ts';
import type { AnyJobProgram, JobContext, JobProgram } from '../../job-images/lib/job-program.ts';
import { runJob } from '../../job-images/lib/run-job.ts';
import { startJobBucket } from './job-process.ts';
import type { JobBucket } from './job-process.ts';

const silentLog = { info: () => {}, warn: () => {}, error: () => {} };

/** A program whose behaviour each test chooses, to pin what the runtime does around it. */
function echoProgram(behaviour: (ctx: JobContext) => Promise<object>): JobProgram<{ word: string }, object> {
  return {
    name: 'echo',
    inputSchema: z.object({ word: z.string() }),
    run: async (spec, ctx) => ({ word: spec.input.word, ...(await behaviour(ctx)) }),
  };
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

  async function runWith(program: AnyJobProgram, spec: object | undefined, extraEnv: Record<string, string> = {}) {
    const lines: string[] = [];
    const exitCode = await runJob({
      programs: [program],
      env: { ...bucket.env, ...(spec ? { CUTROOM_JOB_SPEC: JSON.stringify(spec) } : {}), ...extraEnv },
      writeEvent: (line) => lines.push(line),
      log: silentLog,
    });
    const events = lines.map((line) => parseJobEvent(line.trimEnd())).filter((event): event is JobEvent => event !== null);
    expect(events, 'every stdout line is a job event').to.have.length(lines.length);
    return { exitCode, events, last: events.at(-1) };
  }

  const jobId = randomUUID();
  const spec = (overrides: object = {}) => ({
    jobId,
    program: 'echo',
    userId: randomUUID(),
    input: { word: 'hello' },
    outputPrefix: 'jobs/job-1/',
    ...overrides,
  });

  it('success: result.json under the output prefix, a final result event, exit code 0', async () => {
    const program = echoProgram(async (ctx) => {
      ctx.progress.report('work', 50);
      return { key: ctx.outputKey('thing.txt') };
    });
    const { exitCode, events, last } = await runWith(program, spec());
    expect(exitCode).to.equal(0);
    expect(events[0]).to.deep.equal({ event: 'progress', step: 'work', progress: 50 });
    expect(last).to.deep.equal({ event: 'result', result: { word: 'hello', key: 'jobs/job-1/thing.txt' } });
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

  it('failure: a final error event with the human message, exit code 1, no result.json', async () => {
    const program = echoProgram(async () => {
      throw new JobFailure('The source is not a video');
    });
    const { exitCode, last } = await runWith(program, spec({ outputPrefix: 'jobs/failing' }));
    expect(exitCode).to.equal(1);
    expect(last).to.deep.equal({ event: 'error', message: 'The source is not a video' });
    expect(await bucket.exists('jobs/failing/result.json')).to.equal(false);
  });

  it('an unexpected error is reported as an internal error with its message', async () => {
    const program = echoProgram(async () => {
      throw new TypeError('cannot read properties of undefined');
    });
    const { last } = await runWith(program, spec());
    expect(last).to.deep.equal({ event: 'error', message: 'Internal error in the job program: cannot read properties of undefined' });
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

  it('a missing CUTROOM_JOB_SPEC fails with a clear message', async () => {
    const { exitCode, last } = await runWith(echoProgram(async () => ({})), undefined);
    expect(exitCode).to.equal(1);
    expect(last).to.deep.equal({ event: 'error', message: 'CUTROOM_JOB_SPEC is not set: the job has no spec' });
  });

  it('an invalid spec names the offending field', async () => {
    const { last } = await runWith(echoProgram(async () => ({})), { ...spec(), outputPrefix: undefined });
    expect(last?.event).to.equal('error');
    expect(last && 'message' in last && last.message).to.match(/^Invalid job spec: .*outputPrefix/s);
  });

  it('an unknown program names the programs this image runs', async () => {
    const { last } = await runWith(echoProgram(async () => ({})), spec({ program: 'render' }));
    expect(last).to.deep.equal({ event: 'error', message: 'Unknown program "render": this image runs echo' });
  });

  it("input that fails the program's schema fails before the program runs", async () => {
    let ran = false;
    const program = echoProgram(async () => {
      ran = true;
      return {};
    });
    const { last } = await runWith(program, spec({ input: { word: 42 } }));
    expect(ran).to.equal(false);
    expect(last?.event).to.equal('error');
    expect(last && 'message' in last && last.message).to.match(/^Invalid input for program "echo": .*word/s);
  });

  it('missing S3 settings fail as a job configuration error', async () => {
    const lines: string[] = [];
    const exitCode = await runJob({
      programs: [echoProgram(async () => ({}))],
      env: { CUTROOM_JOB_SPEC: JSON.stringify(spec()) },
      writeEvent: (line) => lines.push(line),
      log: silentLog,
    });
    expect(exitCode).to.equal(1);
    expect(parseJobEvent(lines.at(-1) ?? '')).to.deep.equal({ event: 'error', message: 'Job configuration: S3_BUCKET is required' });
  });

  it('service-raised messages go through the catalogs: a JobFailure\'s code and params ride on the error event and in error.json', async () => {
    const program = echoProgram(async () => {
      throw new JobFailure('The uploaded object "k" is empty (0 bytes)', { code: 'media.empty', params: { size: 0 } });
    });
    const { exitCode, last } = await runWith(program, spec({ outputPrefix: 'jobs/coded/' }));
    expect(exitCode).to.equal(1);
    expect(last).to.deep.equal({ event: 'error', message: 'The uploaded object "k" is empty (0 bytes)', code: 'media.empty', params: { size: 0 } });
    expect(await bucket.getJson('jobs/coded/error.json')).to.deep.equal({ code: 'media.empty', params: { size: 0 }, message: 'The uploaded object "k" is empty (0 bytes)' });
  });

  it('timeoutSeconds aborts the program with a time-limit message', async () => {
    const program = echoProgram(
      (ctx) =>
        new Promise((_resolve, reject) => {
          ctx.signal.addEventListener('abort', () => reject(new Error('aborted')));
        }),
    );
    const { last } = await runWith(program, spec({ timeoutSeconds: 1 }));
    expect(last).to.deep.equal({ event: 'error', message: 'The job did not finish within its time limit of 1 s', code: 'job.timed_out', params: { seconds: 1 } });
  });

  it('SIGTERM aborts the program and reports that it was stopped', async () => {
    const program = echoProgram(
      (ctx) =>
        new Promise((_resolve, reject) => {
          ctx.signal.addEventListener('abort', () => reject(new Error('aborted')));
          setImmediate(() => process.emit('SIGTERM', 'SIGTERM'));
        }),
    );
    const { last } = await runWith(program, spec());
    expect(last).to.deep.equal({ event: 'error', message: 'The job was stopped (SIGTERM) before it finished', code: 'job.cancelled' });
  });
});
