// Writes crds/<plural>.cutroom.dev.yaml from crds/contract/resources.ts; `--check` only reports drift (for CI).
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { crdFiles } from '../crds/contract/crd-definitions.ts';

const crdDir = fileURLToPath(new URL('../crds/', import.meta.url));
const checkOnly = process.argv.includes('--check');

let stale = 0;
for (const { fileName, text } of crdFiles()) {
  const path = crdDir + fileName;
  const current = await readFile(path, 'utf8').catch(() => undefined);
  if (current === text) continue;
  if (checkOnly) {
    stale++;
    console.error(`crds/${fileName} is out of date; run node hack/gen-crds.ts`);
  } else {
    await writeFile(path, text);
    console.log(`wrote crds/${fileName}`);
  }
}
if (stale > 0) process.exitCode = 1;
