import { execFileSync } from 'node:child_process';
import fs, { closeSync, constants, createReadStream, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
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

describe('the log in batches', () => {
  /** A pipe the test reads itself, and the descriptor the destination writes to. */
  function pipe(): { fd: number; read(): string; close(): void } {
    const dir = mkdtempSync(join(tmpdir(), 'cutroom-log-'));
    const fifo = join(dir, 'log');
    execFileSync('mkfifo', [fifo]);
    const fd = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const buffer = Buffer.alloc(1 << 20);
    return {
      fd,
      read: () => {
        try {
          return buffer.toString('utf8', 0, readSync(reader, buffer));
        } catch {
          return ''; // EAGAIN: nothing written yet
        }
      },
      close: () => {
        closeSync(reader);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }

  it('lines logged one per turn of the event loop (one per request) go out a batch per write, not a write each', async () => {
    const output = pipe();
    const destination = asyncLog(output.fd);
    await new Promise((resolve) => destination.once('ready', resolve));
    const logger = pino({ base: null }, destination);
    const write = fs.write;
    let writes = 0;
    fs.write = ((...args: Parameters<typeof fs.write>) => {
      if (args[0] === output.fd) writes += 1;
      return (write as (...all: unknown[]) => void)(...args);
    }) as typeof fs.write;
    try {
      // 60 lines of ~120 bytes, one every 2 ms: each write would have ended before the next line
      for (let index = 0; index < 60; index++) {
        logger.info({ index }, 'GET /api/v1/projects/ 200');
        await sleep(2);
      }
      await sleep(300);
      expect(output.read().trim().split('\n')).to.have.length(60);
      // 7 KB: one batch of 4 KB, the rest by the flush every 100 ms; a write per line would be 60
      expect(writes).to.be.at.least(1).and.at.most(6);
    } finally {
      fs.write = write;
      destination.end();
      output.close();
    }
  });

  it('a line alone is written within the flush period, not held until a batch fills', async () => {
    const output = pipe();
    const destination = asyncLog(output.fd);
    await new Promise((resolve) => destination.once('ready', resolve));
    try {
      pino({ base: null }, destination).info('one line');
      await sleep(500);
      expect(output.read()).to.contain('"msg":"one line"');
    } finally {
      destination.end();
      output.close();
    }
  });
});
