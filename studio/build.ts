// Builds the studio (studio/src) into studio/dist: one minified ES module and its CSS, named
// by content hash so the api can let browsers keep them for a year, and an index.html naming them.
// Run by hack/studio.sh (and so by hack/up.sh and the studio tests when the bundle is missing).
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { build } from 'esbuild';

const root = import.meta.dirname;
const dist = join(root, 'dist');
const assets = join(dist, 'assets');

await rm(dist, { recursive: true, force: true });
await mkdir(assets, { recursive: true });
const result = await build({
  entryPoints: [join(root, 'src/main.tsx')],
  outdir: assets,
  entryNames: '[name]-[hash]',
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2022', 'chrome110', 'firefox115', 'safari16'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  metafile: true,
  sourcemap: false,
  legalComments: 'linked',
  logLevel: 'warning',
});
const outputs = Object.keys(result.metafile.outputs).map((path) => basename(path));
const script = outputs.find((name) => name.endsWith('.js'));
const style = outputs.find((name) => name.endsWith('.css'));
if (!script || !style) throw new Error(`the build wrote no script or no stylesheet: ${outputs.join(', ')}`);
const page = (await readFile(join(root, 'index.html'), 'utf8'))
  .replace('{{script}}', `/studio/assets/${script}`)
  .replace('{{style}}', `/studio/assets/${style}`);
await writeFile(join(dist, 'index.html'), page);
console.log(`studio built: ${outputs.join(', ')}`);
