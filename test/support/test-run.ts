import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * What the processes of one test run share: its id (made by mocha's main process, inherited by
 * the workers it forks), the directory its worlds keep files in, and where the workers of a
 * parallel run write each file's wall time for the reporter.
 */
export const testRunId = (process.env.CUTROOM_TEST_RUN_ID ??= `${process.pid}_${Date.now().toString(36)}`);
export const testRunDirectory = join(tmpdir(), `cutroom-test-${testRunId}`);
export const fileTimesDirectory = join(testRunDirectory, 'file-times');
