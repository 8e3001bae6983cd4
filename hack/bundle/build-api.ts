// Builds the api as production runs it (api/Dockerfile): api/src/main.ts and everything it
// imports bundled by esbuild into api/dist/ — main.js (and migrate.js, api/src/migrate.ts,
// for the chart's migration step), plus chunks shared by both and one per module loaded on
// first use (Stripe, Mux, jose, openid-client, the Kubernetes client, koa-body, nodemailer), so
// those stay loaded on first use. Start-up then reads a handful of files instead of resolving
// and reading ~1,100 modules and their package metadata (docs/decisions.md, issue 42 item 3).
//
//   node hack/bundle/build-api.ts          (hack/build-api.sh: only when a source is newer)
//
// Two things the sources find on disk are given to the bundle at build time:
// - where a module is: `import.meta.url` and `import.meta.dirname` in api/src name the source
//   file's own place, relative to the bundle, so paths built from them (the job programs, the
//   studio's files, swagger-ui-dist's) are the ones the sources reach;
// - the migrations: api/src/db/migration-list.ts answers "discover them in the folder" in the
//   sources, and is replaced here by a module importing every committed migration, so the
//   migrator runs the bundled classes and needs no TypeScript files at run time.
// Left outside the bundle: bcrypt (a native addon, loaded from node_modules).
import { readdir, readFile, rm } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Metafile, type Plugin } from 'esbuild';

const root = join(import.meta.dirname, '../..');
const source = join(root, 'api/src');
const migrations = join(source, 'db/migrations');
export const API_BUNDLE_DIR = join(root, 'api/dist');

/** Each api source's `import.meta.url` / `import.meta.dirname` as that file's own location, seen from the bundle. */
function sourceLocations(outdir: string): Plugin {
  return {
    name: 'source-locations',
    setup(esbuild) {
      esbuild.onLoad({ filter: /\/api\/src\/.*\.ts$/ }, async ({ path }) => {
        let contents = await readFile(path, 'utf8');
        if (contents.includes('import.meta.')) {
          const fromBundle = JSON.stringify(relative(outdir, path).split('\\').join('/'));
          const url = `new URL(${fromBundle}, import.meta.url).href`;
          contents = contents
            .replaceAll('import.meta.url', url)
            .replaceAll('import.meta.dirname', `decodeURIComponent(new URL('.', ${url}).pathname).replace(/\\/$/, '')`);
        }
        return { contents, loader: 'ts' };
      });
    },
  };
}

/** api/src/db/migration-list.ts in the bundle: every committed migration, by its file's name, in order. */
function migrationList(): Plugin {
  return {
    name: 'migration-list',
    setup(esbuild) {
      esbuild.onLoad({ filter: /\/api\/src\/db\/migration-list\.ts$/ }, async () => {
        const files = (await readdir(migrations)).filter((name) => /^Migration\d+\w*\.ts$/.test(name)).sort();
        const lines = files.map((file, index) => `import * as m${index} from ${JSON.stringify(pathToFileURL(join(migrations, file)).pathname)};`);
        const list = files.map((file, index) => `{ name: ${JSON.stringify(file.replace(/\.ts$/, ''))}, class: Object.values(m${index}).find((value) => typeof value === 'function') }`);
        return {
          contents: `${lines.join('\n')}\nexport const bundledMigrations = [\n${list.join(',\n')}\n];\n`,
          loader: 'ts',
          resolveDir: migrations,
        };
      });
    },
  };
}

/** node:http's exports that load undici when read (the WebSocket classes; globals anyway). */
const UNDICI_GETTERS = new Set(['WebSocket', 'CloseEvent', 'MessageEvent']);

/**
 * node:http as CommonJS code gets it. An ES module importing a built-in makes Node build a
 * facade that reads every export once, and reading node:http's WebSocket, CloseEvent and
 * MessageEvent loads undici: ~100 ms for `await import('node:http')` against ~10 ms for
 * `process.getBuiltinModule('node:http')`, measured alone, and ~60 ms of the api's start-up
 * CPU (profiled). The bundle's ES modules import this module instead, which exports the rest;
 * a module importing one of the three would fail the build, not the api.
 */
function httpWithoutFacade(): Plugin {
  const namespace = 'http-without-facade';
  return {
    name: namespace,
    setup(esbuild) {
      esbuild.onResolve({ filter: /^(node:)?http$/ }, ({ kind }) => (kind === 'import-statement' || kind === 'dynamic-import' ? { path: 'node:http', namespace } : undefined));
      esbuild.onLoad({ filter: /.*/, namespace }, () => {
        const names = Object.keys(process.getBuiltinModule('node:http')).filter((name) => !UNDICI_GETTERS.has(name));
        return { contents: `const http = process.getBuiltinModule('node:http');\nexport default http;\nexport const { ${names.join(', ')} } = http;\n`, loader: 'js' };
      });
    },
  };
}

/** Builds the bundle into `outdir` (by default api/dist, what the api image runs); esbuild's account of what went where. */
export async function buildApi(outdir = API_BUNDLE_DIR): Promise<Metafile> {
  await rm(outdir, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: root,
    entryPoints: { main: join(source, 'main.ts'), migrate: join(source, 'migrate.ts') },
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node24',
    // Minified, the scripts held in memory are half the size (10 MB less idle RSS, measured);
    // class and function names stay as written: error names, log lines and the ORM read them.
    // Stack traces name the sources with `node --enable-source-maps` (the maps are beside the scripts).
    minify: true,
    keepNames: true,
    sourcemap: 'linked',
    // CommonJS packages inside an ES module bundle call require() for Node's own modules
    banner: { js: "import { createRequire as __cutroomCreateRequire } from 'node:module'; const require = __cutroomCreateRequire(import.meta.url);" },
    external: ['bcrypt'],
    plugins: [migrationList(), sourceLocations(outdir), httpWithoutFacade()],
    metafile: true,
    legalComments: 'linked',
    logLevel: 'warning',
  });
  const outputs = Object.keys(result.metafile.outputs).filter((path) => path.endsWith('.js'));
  console.log(`api bundled: ${Object.keys(result.metafile.inputs).length} modules into ${outputs.length} scripts in ${relative(root, outdir)}/`);
  return result.metafile;
}

if (import.meta.main) await buildApi(process.argv[2] ? join(process.cwd(), process.argv[2]) : undefined);
