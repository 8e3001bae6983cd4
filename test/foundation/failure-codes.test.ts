import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { catalogs } from '../../api/src/i18n/catalogs.ts';

const root = new URL('../../', import.meta.url).pathname;

async function sourcesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(join(root, dir), { withFileTypes: true, recursive: true });
  return entries.filter((entry) => entry.isFile() && entry.name.endsWith('.ts')).map((entry) => join(entry.parentPath, entry.name));
}

/** Every stable failure code the job programs and the job contract can raise. */
async function failureCodes(): Promise<string[]> {
  const files = [...(await sourcesUnder('job-images')), ...(await sourcesUnder('crds'))];
  const codes = new Set<string>();
  for (const file of files) {
    for (const match of (await readFile(file, 'utf8')).matchAll(/code: '([a-z_]+\.[a-z_.]+)'/g)) codes.add(match[1]!);
  }
  return [...codes].sort();
}

describe('failure codes: every code a job program can report reads in every language', () => {
  it('the scan finds the codes (a scan that finds nothing would prove nothing)', async () => {
    expect(await failureCodes()).to.include.members(['media.corrupt', 'render.failed', 'job.timed_out']);
  });

  for (const locale of ['en', 'pt', 'es'] as const) {
    it(`each code has failure.<code> in the ${locale} catalog`, async () => {
      const missing = (await failureCodes()).filter((code) => !Object.hasOwn(catalogs[locale], `failure.${code}`));
      expect(missing).to.deep.equal([]);
    });
  }
});
