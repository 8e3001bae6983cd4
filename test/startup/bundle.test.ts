import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import { buildApi, API_BUNDLE_DIR } from '../../hack/bundle/build-api.ts';
import { openOrm } from '../../api/src/orm.ts';
import { entities } from '../../api/src/entities.ts';

interface LogLine {
  msg: string;
  url?: string;
  mail?: { to: string; link?: string };
}

const MIGRATIONS = join(import.meta.dirname, '../../api/src/db/migrations');

/** `node <script>` of the bundle with the run's environment and `env`; its JSON log lines as they come. */
function runBundle(script: string, env: Record<string, string>): { child: ChildProcess; lines: LogLine[]; output: () => string } {
  const child = spawn(process.execPath, [join(API_BUNDLE_DIR, script)], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: LogLine[] = [];
  let output = '';
  let pending = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    pending += chunk.toString();
    const complete = pending.split('\n');
    pending = complete.pop() ?? '';
    for (const text of complete) if (text.startsWith('{')) lines.push(JSON.parse(text) as LogLine);
  });
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { child, lines, output: () => output };
}

async function until<T>(find: () => T | undefined, what: string, child: ChildProcess, output: () => string, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (child.exitCode !== null) throw new Error(`the bundle exited with ${child.exitCode} before ${what}: ${output()}`);
    if (Date.now() > deadline) throw new Error(`no ${what} in ${timeoutMs} ms: ${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('the api bundle the image runs (hack/bundle/build-api.ts → api/dist)', function () {
  this.timeout(180_000);
  const server = new URL(process.env.DATABASE_URL!);
  const name = `cutroom_bundle_${process.pid}`;
  const databaseUrl = new URL(`/${name}`, server).toString();
  const admin = new pg.Client({ connectionString: new URL('/postgres', server).toString() });
  let api: ReturnType<typeof runBundle> | undefined;
  let bundled: string[] = [];

  before(async () => {
    bundled = Object.keys((await buildApi()).inputs);
    await admin.connect();
    await admin.query(`create database "${name}"`);
  });
  after(async () => {
    if (api && api.child.exitCode === null) {
      api.child.kill('SIGTERM');
      await once(api.child, 'exit');
    }
    await admin.query(`drop database if exists "${name}" with (force)`);
    await admin.end();
  });

  it('migrate.js applies every committed migration, under the names the sources give them', async () => {
    const migrate = runBundle('migrate.js', { DATABASE_URL: databaseUrl });
    const [code] = (await once(migrate.child, 'exit')) as [number | null];
    expect(code, migrate.output()).to.equal(0);
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    const applied = await client.query<{ name: string }>('select name from mikro_orm_migrations order by id').finally(() => client.end());
    const files = (await readdir(MIGRATIONS)).filter((file) => /^Migration\d+\w*\.ts$/.test(file)).sort();
    // built in, not read from the folder at run time (the image needs no TypeScript to migrate)
    expect(files.filter((file) => !bundled.includes(`api/src/db/migrations/${file}`))).to.deep.equal([]);
    expect(applied.rows.map((row) => row.name)).to.deep.equal(files.map((file) => file.replace(/\.ts$/, '')));
    // the sources' migrator, reading the files, finds nothing left to apply and no drift from the entities
    const orm = await openOrm({ DATABASE_URL: databaseUrl, DATABASE_POOL_MAX: 1 }, entities);
    try {
      expect((await orm.migrator.getPending()).map((migration) => migration.name)).to.deep.equal([]);
      expect((await orm.schema.getUpdateSchemaSQL({ wrap: false, safe: false, dropTables: true })).trim()).to.equal('');
    } finally {
      await orm.close();
    }
  });

  it('main.js answers sign-up → e-mailed verification → log-in → project create → list, and serves its API reference', async () => {
    api = runBundle('main.js', {
      DATABASE_URL: databaseUrl,
      NODE_ENV: 'test',
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'info',
      BCRYPT_COST: '4',
      JOB_BACKEND: 'local',
      REDIS_KEY_PREFIX: `${process.env.REDIS_KEY_PREFIX ?? 'cutroom-test:'}bundle:`,
    });
    const { child, lines, output } = api;
    const url = await until(() => lines.find((line) => line.msg === 'api listening')?.url, 'api listening', child, output);

    const email = 'bundle-user@example.com';
    const signup = await fetch(`${url}/api/v1/users/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Bundle User', username: 'bundle-user', email, password: 'bundle-password-1' }),
    });
    expect(signup.status, await signup.clone().text()).to.equal(201);
    // the verification link is signed with jose, which the bundle loads from its own chunk on first use
    const link = await until(() => lines.find((line) => line.mail?.to === email && line.mail.link)?.mail!.link, 'verification mail', child, output);
    const token = new URL(link).searchParams.get('token');
    const verified = await fetch(`${url}/api/v1/auth/verify-email`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) });
    expect(verified.status, await verified.clone().text()).to.equal(200);

    const login = await fetch(`${url}/api/v1/auth/login`, { method: 'POST', body: new URLSearchParams({ username: 'bundle-user', password: 'bundle-password-1' }) });
    expect(login.status, await login.clone().text()).to.equal(200);
    const { csrf_token: csrfToken } = (await login.json()) as { csrf_token: string };
    const cookie = login.headers.getSetCookie().map((set) => set.split(';')[0]).join('; ');
    const headers = { cookie, 'x-csrf-token': csrfToken, 'content-type': 'application/json' };

    const created = await fetch(`${url}/api/v1/projects/`, { method: 'POST', headers, body: JSON.stringify({ name: 'Bundled' }) });
    expect(created.status, await created.clone().text()).to.equal(201);
    const { id } = (await created.json()) as { id: string };
    const list = await fetch(`${url}/api/v1/projects/`, { headers });
    expect(list.status).to.equal(200);
    const page = (await list.json()) as { data: { id: string; name: string }[]; total_count: number };
    expect(page.total_count).to.equal(1);
    expect(page.data.map((project) => [project.id, project.name])).to.deep.equal([[id, 'Bundled']]);

    // the document is generated from the bundled routes, and Swagger UI's files are found from the bundle
    const document = (await (await fetch(`${url}/api/v1/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(document.paths)).to.include.members(['/api/v1/users/', '/api/v1/projects/']);
    const asset = await fetch(`${url}/api/v1/docs/assets/swagger-ui.css`);
    expect(asset.status).to.equal(200);
    expect((await asset.text()).length).to.be.greaterThan(1000);
  });
});
