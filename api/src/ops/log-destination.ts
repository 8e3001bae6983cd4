import pino from 'pino';
import { Counter, type Registry } from 'prom-client';

/** The most the log holds in memory unwritten; beyond it, lines are dropped and counted. */
const LOG_BUFFER_MAX_BYTES = 16 * 1024 * 1024;
/** Lines are written in batches of at least this many bytes (a dozen access lines), … */
const LOG_BATCH_BYTES = 4096;
/** … or at the latest this long after they were logged. */
const LOG_FLUSH_MS = 100;

export type LogDestination = ReturnType<typeof pino.destination>;

/**
 * The api's log: standard output, written asynchronously (a line per request costs no
 * blocking write on the event loop; pino writes what is buffered when the process exits,
 * also on an uncaught exception), in batches of LOG_BATCH_BYTES or every LOG_FLUSH_MS:
 * one write to the thread pool per line was a handoff per request. A process killed
 * outright (SIGKILL, out of memory) loses the lines of its last LOG_FLUSH_MS. When the
 * output stalls (a slow log collector), at most `maxBytes` wait in memory: further lines
 * are dropped, and counted by `countDroppedLines`, instead of growing the heap until the
 * process runs out of memory.
 */
export function asyncLog(fd = 1, maxBytes = LOG_BUFFER_MAX_BYTES): LogDestination {
  return pino.destination({ dest: fd, sync: false, maxLength: maxBytes, minLength: LOG_BATCH_BYTES, periodicFlush: LOG_FLUSH_MS });
}

/** cutroom_log_lines_dropped_total: the lines the log dropped while its output stalled. */
export function countDroppedLines(destination: LogDestination, registry: Registry): void {
  const dropped = new Counter({
    name: 'cutroom_log_lines_dropped_total',
    help: 'Log lines dropped because the log output stalled with LOG_BUFFER_MAX_BYTES (16 MB) of lines waiting.',
    registers: [registry],
  });
  destination.on('drop', () => dropped.inc());
}
