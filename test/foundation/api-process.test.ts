import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { connect, createServer, type AddressInfo } from 'node:net';
import { expect } from 'chai';
import { configWarnings, loadConfig } from '../../api/src/config.ts';
import { freePort } from '../support/local-servers.ts';

interface LogLine {
  level: number;
  msg: string;
  url?: string;
}

/** `node api/src/main.ts` as hack/up.sh starts it, with its JSON log lines parsed as they come; an undefined variable is unset. */
async function startApiProcess(env: Record<string, string | undefined>): Promise<{ child: ChildProcess; lines: LogLine[]; url: string }> {
  const merged = { ...process.env, ...env };
  for (const [name, value] of Object.entries(merged)) if (value === undefined) delete merged[name];
  const child = spawn(process.execPath, ['api/src/main.ts'], { env: merged, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: LogLine[] = [];
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the api did not start in 20 s: ${stderr}`)), 20_000);
    let pending = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      pending += chunk.toString();
      const complete = pending.split('\n');
      pending = complete.pop() ?? '';
      for (const text of complete) {
        if (!text.startsWith('{')) continue; // the log is JSON lines; anything else is not ours to read
        const line = JSON.parse(text) as LogLine;
        lines.push(line);
        if (line.msg === 'api listening' && line.url) {
          clearTimeout(timer);
          resolve(line.url);
        }
      }
    });
    child.once('exit', (code) => reject(new Error(`the api exited with ${code}: ${stderr}`)));
  });
  return { child, lines, url };
}

describe('the api process (api/src/main.ts)', () => {
  describe('configuration warnings', () => {
    it('the default SECRET_KEY outside tests → a warning naming SECRET_KEY; tests and a set key → none', () => {
      for (const NODE_ENV of ['development', undefined]) {
        const warnings = configWarnings(loadConfig(NODE_ENV ? { NODE_ENV } : {}));
        expect(warnings.some((warning) => /^SECRET_KEY is the published development default/.test(warning)), String(NODE_ENV)).to.equal(true);
      }
      expect(configWarnings(loadConfig({ NODE_ENV: 'test' }))).to.deep.equal([]);
      expect(configWarnings(loadConfig({ NODE_ENV: 'development', SECRET_KEY: 'a-long-random-local-secret' }))).to.deep.equal([]);
    });

    it('production without METRICS_TOKEN → a warning that /metrics is public', () => {
      const production = { NODE_ENV: 'production', SECRET_KEY: 'a-long-random-production-secret' };
      expect(configWarnings(loadConfig(production))).to.deep.equal([
        'METRICS_TOKEN is unset: /metrics is public. Set it, and give Prometheus the same bearer token.',
      ]);
      expect(configWarnings(loadConfig({ ...production, METRICS_TOKEN: 'a-long-scrape-token-123' }))).to.deep.equal([]);
    });

    it('HTTP_HEADERS_TIMEOUT_MS above HTTP_REQUEST_TIMEOUT_MS stops start-up', () => {
      expect(() => loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '5000', HTTP_REQUEST_TIMEOUT_MS: '1000' })).to.throw(/HTTP_HEADERS_TIMEOUT_MS/);
    });
  });

  describe('started with the development SECRET_KEY and small connection limits', () => {
    const HEADERS_TIMEOUT_MS = 500;
    let api: Awaited<ReturnType<typeof startApiProcess>>;
    before(async function () {
      this.timeout(30_000);
      api = await startApiProcess({
        NODE_ENV: 'development',
        SECRET_KEY: undefined,
        HOST: '127.0.0.1',
        PORT: '0',
        LOG_LEVEL: 'info',
        // No database: the process starts anyway and the test never touches another test's jobs.
        DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/nowhere`,
        REDIS_KEY_PREFIX: `${process.env.REDIS_KEY_PREFIX ?? 'cutroom-test:'}api-process:`,
        HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
        HTTP_REQUEST_TIMEOUT_MS: '1000',
      });
    });
    after(async () => {
      if (!api) return;
      const exited = new Promise((resolve) => api.child.once('exit', resolve));
      api.child.kill('SIGTERM');
      await exited;
    });

    it('logs a warning that SECRET_KEY is the development default', () => {
      const warnings = api.lines.filter((line) => line.level === 40).map((line) => line.msg);
      expect(warnings.some((message) => message.startsWith('SECRET_KEY is the published development default'))).to.equal(true);
    });

    it('SIGTERM while start-up waits on PostgreSQL ends the process through exit (143, its log flushed), not by the signal', async function () {
      this.timeout(20_000);
      // A database port that accepts connections and never answers: start-up waits there.
      const silent = createServer((socket) => socket.on('error', () => {}));
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      const child = spawn(process.execPath, ['api/src/main.ts'], {
        env: { ...process.env, PORT: '0', DATABASE_URL: `postgres://postgres@127.0.0.1:${(silent.address() as AddressInfo).port}/cutroom` },
        stdio: 'ignore',
      });
      try {
        // The signal goes once start-up has reached the database (on a loaded machine a fixed
        // wait could send it before the process had run a line of its own).
        await once(silent, 'connection');
        expect(child.exitCode, 'still starting').to.equal(null);
        child.kill('SIGTERM');
        const [code, signal] = (await once(child, 'exit')) as [number | null, string | null];
        expect({ code, signal }).to.deep.equal({ code: 143, signal: null });
      } finally {
        child.kill('SIGKILL');
        silent.close();
      }
    });

    it('closes a connection that sends nothing within HTTP_HEADERS_TIMEOUT_MS', async () => {
      const { port } = new URL(api.url);
      const started = Date.now();
      const socket = connect(Number(port), '127.0.0.1');
      socket.on('data', () => {});
      socket.on('error', () => {});
      const closedAfter = await new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('the api kept a silent connection open')), HEADERS_TIMEOUT_MS + 2000);
        socket.once('close', () => {
          clearTimeout(timer);
          resolve(Date.now() - started);
        });
      }).finally(() => socket.destroy());
      expect(closedAfter).to.be.at.least(HEADERS_TIMEOUT_MS - 50);
    });
  });
});
