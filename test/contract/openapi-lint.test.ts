import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { json, startTestApp, type TestApp } from '../support/harness.ts';

const run = promisify(execFile);
const REDOCLY = join(import.meta.dirname, '../../node_modules/@redocly/cli/bin/cli.js');
const CONFIG = join(import.meta.dirname, '../../hack/api-client/redocly.yaml');

/** The contract's own paths (spec/api.md) that end in a slash: Redocly's no-path-trailing-slash, lowered to a warning for these. */
const CONTRACT_TRAILING_SLASH_PATHS = [
  '/api/v1/users/',
  '/api/v1/projects/',
  '/api/v1/projects/{project_uuid}/edits/',
  '/api/v1/projects/{project_uuid}/drafts/',
  '/api/v1/projects/{project_uuid}/exports/',
];

/** Warnings accepted in docs/decisions.md (Issue 22 item 10), by rule; any other warning fails the test. */
const ACCEPTED_WARNINGS = new Set(['info-license', 'no-ambiguous-paths', 'no-path-trailing-slash']);

interface Problem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
}

describe('the OpenAPI document passes a third-party linter', () => {
  let app: TestApp;
  let directory: string;
  let problems: Problem[];
  before(async function () {
    this.timeout(120_000);
    app = await startTestApp();
    directory = await mkdtemp(join(tmpdir(), 'openapi-lint-'));
    const file = join(directory, 'openapi.json');
    // The document as served, so whatever any feature registers (keys, webhooks, headers) is linted with it.
    await writeFile(file, JSON.stringify(await json(await app.fetch('/api/v1/openapi.json'))));
    const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
    // Redocly exits 1 when it finds errors; its JSON report is on stdout either way.
    const { stdout } = await run(process.execPath, [REDOCLY, 'lint', file, '--config', CONFIG, '--format', 'json'], { env, maxBuffer: 64 << 20 }).catch(
      (failure: { stdout?: string }) => ({ stdout: failure.stdout ?? '' }),
    );
    problems = (JSON.parse(stdout) as { problems: Problem[] }).problems;
  });
  after(async () => {
    await app.close();
    await rm(directory, { recursive: true, force: true });
  });

  it("Redocly's recommended rules (@redocly/cli, pinned) find no error in the served document", () => {
    const errors = problems.filter((problem) => problem.severity === 'error');
    const byRule = new Map<string, number>();
    for (const problem of problems) byRule.set(`${problem.severity} ${problem.ruleId}`, (byRule.get(`${problem.severity} ${problem.ruleId}`) ?? 0) + 1);
    console.log(`      redocly lint (recommended): ${errors.length} errors, ${problems.length - errors.length} warnings${[...byRule].map(([rule, count]) => `; ${rule} × ${count}`).join('')}`);
    expect(errors.map((problem) => `${problem.ruleId}: ${problem.message}`)).to.deep.equal([]);
  });

  it('every warning it gives is one accepted in docs/decisions.md', () => {
    const warnings = problems.filter((problem) => problem.severity !== 'error');
    expect(warnings.filter((problem) => !ACCEPTED_WARNINGS.has(problem.ruleId)).map((problem) => `${problem.ruleId}: ${problem.message}`)).to.deep.equal([]);
    const trailing = warnings.filter((problem) => problem.ruleId === 'no-path-trailing-slash').map((problem) => /`([^`]+)`/.exec(problem.message)?.[1]);
    expect(trailing.sort()).to.deep.equal([...CONTRACT_TRAILING_SLASH_PATHS].sort());
  });
});
