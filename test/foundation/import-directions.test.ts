import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { closureOf, folderGroups, importCircles, importViolations, MAX_FOLDER_GROUP, MAX_IMPORTS_IN_GROUPS, MAX_OPERATOR_CLOSURE, OPERATOR_API_ENTRIES } from '../../hack/import-directions.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

describe('architecture: import directions (hack/import-directions.ts)', () => {
  it('job images import nothing from the api, services nothing from http/, http/ no feature, the operator only the job host, config and metrics, and no import circle', async () => {
    expect(await importViolations()).to.deep.equal([]);
  });

  it('the operator reaches the api only through its allowed entries, and none of the api processes its graph has no reason to load', async () => {
    const reached = await closureOf(['operator/src/main.ts']);
    expect(reached).to.include.members([...OPERATOR_API_ENTRIES]);
    for (const absent of ['api/src/app.ts', 'api/src/main.ts', 'api/src/jobs/local-runner.ts', 'api/src/http/router.ts']) expect(reached, absent).not.to.include(absent);
  });

  it(`the operator's program reaches at most ${MAX_OPERATOR_CLOSURE} files: the job texts, not every feature's messages; the job domain's entities, not every feature's`, async () => {
    const reached = await closureOf(['operator/src/main.ts']);
    expect(reached.length).to.be.at.most(MAX_OPERATOR_CLOSURE);
    expect(reached).to.include.members(['api/src/i18n/messages/job-texts.ts', 'api/src/jobs/entities.ts']);
    for (const absent of ['api/src/i18n/catalogs.ts', 'api/src/entities.ts', 'api/src/i18n/messages/accounts.ts', 'api/src/drafts/entities.ts']) expect(reached, absent).not.to.include(absent);
  });

  it('a circle is found, whatever its length (the check can fail)', async () => {
    // the check itself, on files that import each other in a ring: a module graph the product must never have
    const ring = await mkdtemp(join(root, 'test/.ring-'));
    try {
      await writeFile(join(ring, 'a.ts'), "import { b } from './b.ts';\nexport const a = b;\n");
      await writeFile(join(ring, 'b.ts'), "import { c } from './c.ts';\nexport const b = c;\n");
      await writeFile(join(ring, 'c.ts'), "import type { a } from './a.ts';\nexport const c = 1 as unknown as typeof a;\n");
      await writeFile(join(ring, 'd.ts'), "import { a } from './a.ts';\nexport const d = a;\n");
      const rel = (name: string) => join(ring.slice(root.length), name);
      expect(await importCircles(['a.ts', 'b.ts', 'c.ts', 'd.ts'].map(rel))).to.deep.equal([['a.ts', 'b.ts', 'c.ts'].map(rel)]);
    } finally {
      await rm(ring, { recursive: true, force: true });
    }
  });

  it(`the folder tree is the map: no group of api/src folders that reach each other holds more than ${MAX_FOLDER_GROUP} folders, nor all such groups more than ${MAX_IMPORTS_IN_GROUPS} imports`, async () => {
    const { groups } = await folderGroups();
    expect(groups[0]?.folders.length ?? 0, JSON.stringify(groups[0])).to.be.at.most(MAX_FOLDER_GROUP);
    expect(groups.reduce((sum, group) => sum + group.importsInside, 0)).to.be.at.most(MAX_IMPORTS_IN_GROUPS);
  });

  it('a group of folders is found through any file of theirs, the top-level files each a unit of its own (the check can fail)', async () => {
    const tree = await mkdtemp(join(root, 'test/.folders-'));
    try {
      await mkdir(join(tree, 'a/deep'), { recursive: true });
      await mkdir(join(tree, 'b'));
      await mkdir(join(tree, 'c'));
      // a → b → root.ts → a: one group of three, whichever file of a folder imports; c only imports a
      await writeFile(join(tree, 'a/deep/one.ts'), "import { b } from '../../b/b.ts';\nexport const a = b;\n");
      await writeFile(join(tree, 'b/b.ts'), "import type { r } from '../root.ts';\nexport const b = 1 as unknown as typeof r;\n");
      await writeFile(join(tree, 'root.ts'), "import { a } from './a/deep/one.ts';\nexport const r = a;\n");
      await writeFile(join(tree, 'c/c.ts'), "import { a } from '../a/deep/one.ts';\nexport const c = a;\n");
      const { groups, imports } = await folderGroups(tree.slice(root.length));
      expect(groups).to.deep.equal([{ folders: ['a', 'b', 'root.ts'], importsInside: 3 }]);
      expect(imports).to.equal(4);
    } finally {
      await rm(tree, { recursive: true, force: true });
    }
  });

  it("the operator image's sources (the closure the Dockerfile copies) load on their own", async function () {
    this.timeout(60_000);
    const image = await mkdtemp(join(tmpdir(), 'cutroom-operator-image-'));
    try {
      for (const file of await closureOf(['operator/src/main.ts'])) {
        await cp(join(root, file), join(image, file), { recursive: true });
      }
      await cp(join(root, 'package.json'), join(image, 'package.json'));
      await symlink(join(root, 'node_modules'), join(image, 'node_modules'));
      const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', "await import('./operator/src/operator.ts'); console.log('loaded')"], { cwd: image });
      expect(stdout.trim()).to.equal('loaded');
    } finally {
      await rm(image, { recursive: true, force: true });
    }
  });

  it('the api with the local backend never loads the Kubernetes client; the operator does (the check can fail)', async function () {
    this.timeout(60_000);
    // In-thread resolve hooks see every specifier the module graph asks for, static or dynamic.
    const loadsClient = async (entry: string) => {
      const script = `import { registerHooks } from 'node:module';
let seen = false;
registerHooks({ resolve(specifier, context, next) { if (specifier.startsWith('@kubernetes/client-node')) seen = true; return next(specifier, context); } });
await import(${JSON.stringify(entry)});
console.log(seen);`;
      const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { cwd: root });
      return stdout.trim();
    };
    expect(await loadsClient('./api/src/app.ts'), 'api/src/app.ts').to.equal('false');
    expect(await loadsClient('./operator/src/operator.ts'), 'operator/src/operator.ts').to.equal('true');
  });
});
