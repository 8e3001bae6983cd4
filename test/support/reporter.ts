import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Mocha from 'mocha';
import { fileTimesDirectory } from './test-run.ts';

const SLOWEST_FILES = 10;

/**
 * The spec reporter, with the wall time of the slowest test files (the suite's time budget is
 * spent there), closed by the line CI reads: exactly `N passed, N failed`.
 */
export default class CutroomReporter extends Mocha.reporters.Spec {
  constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
    super(runner, options);
    // A file's top suite, from its first hook to its last: its own startup and teardown included.
    const fileTimes = new Map<string, number>();
    const started = new Map<Mocha.Suite, number>();
    runner.on(Mocha.Runner.constants.EVENT_SUITE_BEGIN, (suite: Mocha.Suite) => {
      if (suite.file && suite.parent?.root) started.set(suite, Date.now());
    });
    runner.on(Mocha.Runner.constants.EVENT_SUITE_END, (suite: Mocha.Suite) => {
      const start = started.get(suite);
      if (start === undefined || !suite.file) return;
      const file = suite.file.slice(suite.file.lastIndexOf('/test/') + 1);
      fileTimes.set(file, (fileTimes.get(file) ?? 0) + Date.now() - start);
    });
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
      const { passes = 0, failures = 0 } = runner.stats ?? {};
      // A parallel run's workers timed their files themselves (the events arrive here after each file).
      for (const [file, ms] of workerFileTimes()) fileTimes.set(file, ms);
      // After the spec reporter's epilogue, so that the count is the last line.
      process.on('exit', () => {
        const slowest = [...fileTimes].sort(([, a], [, b]) => b - a).slice(0, SLOWEST_FILES);
        if (slowest.length > 1) {
          process.stdout.write(`slowest files:\n${slowest.map(([file, ms]) => `  ${(ms / 1000).toFixed(1).padStart(6)} s  ${file}`).join('\n')}\n`);
        }
        process.stdout.write(`${passes} passed, ${failures} failed\n`);
      });
    });
  }
}

/** The files' wall times the workers of a parallel run wrote (none in a serial run). */
function workerFileTimes(): Array<[string, number]> {
  let names: string[];
  try {
    names = readdirSync(fileTimesDirectory);
  } catch {
    return [];
  }
  return names.flatMap((name) =>
    readFileSync(join(fileTimesDirectory, name), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const { file, ms } = JSON.parse(line) as { file: string; ms: number };
        return [file.slice(file.lastIndexOf('/test/') + 1), ms] as [string, number];
      }),
  );
}
