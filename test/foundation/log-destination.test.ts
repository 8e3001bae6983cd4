import { execFileSync } from 'node:child_process';
import { constants, createReadStream, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import pino from 'pino';
import { asyncLog, countDroppedLines } from '../../api/src/ops/log-destination.ts';
import { createMetricsRegistry } from '../../api/src/ops/metrics.ts';

/**
 * The api logs asynchronously; when its output stalls (a log collector that stopped
 * reading), what waits in memory must stay bounded, and what is dropped must be counted.
 */
describe('the log when its output stalls', () => {
  it('at most maxBytes wait unwritten; further lines are dropped and counted in cutroom_log_lines_dropped_total', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cutroom-log-'));
    const fifo = join(dir, 'stalled');
    execFileSync('mkfifo', [fifo]);
    // Opened for reading and writing, never read: the pipe's buffer fills and stays full.
    const fd = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
    const maxBytes = 256 * 1024;
    const destination = asyncLog(fd, maxBytes);
    const registry = createMetricsRegistry();
    countDroppedLines(destination, registry);
    try {
      await new Promise((resolve) => destination.once('ready', resolve));
      const logger = pino({ base: null }, destination);
      const line = 'x'.repeat(1000);
      const lines = 4000;
      for (let index = 0; index < lines; index++) logger.info({ index }, line);
      // What was not dropped fits in the pipe's buffer and maxBytes.
      const dropped = (await registry.getSingleMetric('cutroom_log_lines_dropped_total')!.get()).values[0]!.value;
      const lineBytes = JSON.stringify({ level: 30, time: Date.now(), index: 1000, msg: line }).length + 1;
      expect(dropped).to.be.greaterThan(0);
      expect((lines - dropped) * lineBytes, 'bytes kept').to.be.at.most(maxBytes + 1024 * 1024);
    } finally {
      // Drain the pipe so the destination can finish, end it (it closes its descriptor), then stop reading.
      const reader = createReadStream(fifo);
      reader.resume();
      await new Promise((resolve) => {
        destination.once('close', resolve);
        destination.end();
      });
      reader.destroy();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
