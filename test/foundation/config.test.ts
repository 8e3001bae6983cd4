import { readFile } from 'node:fs/promises';
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../api/src/config.ts';
import { replaceConfigTable } from '../../api/src/config-docs.ts';

describe('configuration', () => {
  it("every knob the spec names exists with the spec's default", () => {
    const config = loadConfig({});
    expect(config).to.include({
      SESSION_COOKIE_MAX_AGE: 86400,
      SESSION_TIMEOUT_MINUTES: 30,
      SESSION_REMEMBER_ME_DAYS: 30,
      LOGIN_MAX_ATTEMPTS: 5,
      LOGIN_ATTEMPT_WINDOW_SECONDS: 900,
      LOGIN_LOCKOUT_BASE_SECONDS: 60,
      LOGIN_LOCKOUT_MAX_SECONDS: 3600,
      STORAGE_MAX_UPLOAD_SIZE_MB: 2048,
      MULTIPART_CUTOFF_BYTES: 25 * 1024 * 1024,
      MULTIPART_PART_SIZE_BYTES: 16 * 1024 * 1024,
      MULTIPART_MAX_PARTS: 10000,
      MEDIA_TOKEN_TTL_SECONDS: 300,
      MAX_EXTERNAL_VIDEO_DURATION_SECONDS: 3600,
      MAX_VIDEO_DURATION_MS: 7_200_000,
      JOB_BACKEND: 'local',
    });
    expect(config.SUPPORTED_LOCALES).to.deep.equal(['en', 'pt', 'es']);
  });

  it('a bad value stops start-up with a message naming the variable', () => {
    const bad: Record<string, string>[] = [
      { LOGIN_MAX_ATTEMPTS: 'many' },
      { JOB_BACKEND: 'docker' },
      { SUPPORTED_LOCALES: 'en,fr' },
      { DATABASE_URL: 'not a url' },
      { MULTIPART_MAX_PARTS: '20000' },
    ];
    for (const env of bad) {
      const [name] = Object.keys(env);
      expect(() => loadConfig(env), name).to.throw(ConfigError, new RegExp(`\\b${name}\\b`));
    }
  });

  it('production refuses the development SECRET_KEY', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).to.throw(ConfigError, /\bSECRET_KEY\b/);
    expect(loadConfig({ NODE_ENV: 'production', SECRET_KEY: 'a-long-random-production-secret' }).NODE_ENV).to.equal('production');
  });

  it('the main entry point exits with the message when configuration is bad', async () => {
    const { spawnSync } = await import('node:child_process');
    const result = spawnSync(process.execPath, ['api/src/main.ts'], {
      env: { PATH: process.env.PATH, PORT: 'eighty' },
      encoding: 'utf8',
      timeout: 20000,
    });
    expect(result.status).to.equal(2);
    expect(result.stderr).to.contain('PORT');
  });

  it("the README's configuration table matches the config module", async () => {
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
    expect(readme, 'run `node hack/config-table.ts --write`').to.equal(replaceConfigTable(readme));
  });
});
