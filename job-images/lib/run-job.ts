import type { z } from 'zod';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createS3Client, s3SettingsFromEnv } from '../../crds/contract/s3-client.ts';
import { jobPrograms } from '../../crds/contract/programs.ts';
import { failureCode, failureMessage, JobFailure } from './job-failure.ts';
import { createJobLog } from './job-log.ts';
import type { JobLog } from './job-log.ts';
import type { AnyJobProgram, JobContext, JobProgram } from './job-program.ts';
import { outputKey, parseJobInput, parseJobSpec } from './job-spec.ts';
import { ERROR_FILE_NAME, INPUT_FILE_NAME, RESULT_FILE_NAME, type ErrorFile } from '../../crds/contract/outcome.ts';
import type { JobSpec } from './job-spec.ts';
import { JobStorage } from './job-storage.ts';
import { programProgress, progressSinkFromEnv } from './progress.ts';
import type { ProgressSink } from './progress.ts';
import { DEFAULT_TERMINATION_LOG_PATH, writeTerminationMessage } from './termination-log.ts';

export interface RunJobOptions {
  /** The programs this image hosts; the spec's `program` picks one by name. */
  programs: readonly AnyJobProgram[];
  env?: NodeJS.ProcessEnv;
  /** Where progress lines go (stdout in a real run). */
  writeLine?: (line: string) => void;
  log?: JobLog;
}

/**
 * The whole life of a job program: spec → program → result.json (exit code 0), or
 * error.json plus the termination message (exit code 1); stdout carries progress only.
 * Temp files, timers, signal handlers and the S3 client are released either way.
 */
export async function runJob(options: RunJobOptions): Promise<number> {
  const env = options.env ?? process.env;
  const writeLine = options.writeLine ?? ((line: string) => process.stdout.write(line));
  let log = options.log ?? createJobLog({});

  const controller = new AbortController();
  const onSigterm = (): void => controller.abort(new JobFailure('The job was stopped (SIGTERM) before it finished', { code: 'job.cancelled' }));
  process.once('SIGTERM', onSigterm);
  let deadline: NodeJS.Timeout | undefined;
  let workDir: string | undefined;
  let storage: JobStorage | undefined;
  let progress: ProgressSink | undefined;
  let outputPrefix: string | undefined;

  try {
    const spec = parseJobSpec(env.CUTROOM_JOB_SPEC);
    log = options.log ?? createJobLog({ jobId: spec.jobId, program: spec.program });
    outputPrefix = spec.outputPrefix;
    if (spec.timeoutSeconds) {
      const seconds = spec.timeoutSeconds;
      deadline = setTimeout(
        () => controller.abort(new JobFailure(`The job did not finish within its time limit of ${seconds} s`, { code: 'job.timed_out', params: { seconds } })),
        seconds * 1000,
      );
      deadline.unref();
    }

    let settings;
    try {
      settings = s3SettingsFromEnv(env);
    } catch (error) {
      throw new JobFailure(`Job configuration: ${error instanceof Error ? error.message : String(error)}`);
    }
    storage = new JobStorage(createS3Client(settings), settings.bucket);
    // Known once the outcome can be written: an unknown program fails with error.json like any other failure.
    const program = options.programs.find((candidate) => candidate.name === spec.program);
    if (!program) {
      const hosted = options.programs.map((candidate) => candidate.name).join(', ');
      throw new JobFailure(`Unknown program "${spec.program}": this image runs ${hosted}`);
    }
    // A large input travels as an object next to the outputs (the spec names it, not holds it).
    const rawInput = spec.inputRef ? await storage.readJson(outputKey(spec.outputPrefix, INPUT_FILE_NAME), controller.signal) : spec.input;
    const input = parseJobInput<object>(program.name, jobPrograms[program.name].input as z.ZodType<object>, rawInput);
    progress = await progressSinkFromEnv(env, log, writeLine);
    workDir = await mkdtemp(join(tmpdir(), `cutroom-${spec.program}-`));

    const ctx: JobContext = {
      workDir,
      storage,
      progress: programProgress(program.name, progress),
      signal: controller.signal,
      log,
      env,
      outputKey: (fileName) => outputKey(spec.outputPrefix, fileName),
    };
    log.info('job started');
    const result = await runProgram(program, { ...spec, input }, ctx);
    controller.signal.throwIfAborted();
    await progress.flush();
    await storage.putJson(ctx.outputKey(RESULT_FILE_NAME), result, controller.signal);
    log.info('job succeeded');
    return 0;
  } catch (error) {
    // A child killed by our own abort fails with a vaguer error than the abort's reason.
    const cause: unknown = controller.signal.aborted ? controller.signal.reason : error;
    const message = failureMessage(cause);
    log.error('job failed', { error: message, ...(cause instanceof JobFailure ? {} : { stack: (cause as Error)?.stack }) });
    const coded = failureCode(cause);
    await progress?.flush();
    if (storage && outputPrefix !== undefined) {
      try {
        const written: ErrorFile = { code: coded.code ?? null, params: coded.params ?? null, message };
        await storage.putJson(outputKey(outputPrefix, ERROR_FILE_NAME), written, AbortSignal.timeout(10_000));
      } catch (writeError) {
        log.warn('error.json could not be written', { error: writeError instanceof Error ? writeError.message : String(writeError) });
      }
    }
    await writeTerminationMessage(env.CUTROOM_TERMINATION_LOG || DEFAULT_TERMINATION_LOG_PATH, message);
    return 1;
  } finally {
    process.removeListener('SIGTERM', onSigterm);
    if (deadline) clearTimeout(deadline);
    storage?.client.destroy();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  }
}

/** One program of the union, run with the input its own schema parsed (the pairing is the registry's). */
function runProgram(program: AnyJobProgram, spec: JobSpec, ctx: JobContext): Promise<object> {
  return (program as JobProgram).run(spec as JobSpec<never>, ctx);
}
