// Prints every import that crosses a boundary the architecture forbids, one per line, and
// exits 1 when there is any:
//   - job-images/ imports nothing from api/ (the job contract lives in crds/contract/, below both);
//   - the operator imports from api/ only OPERATOR_API_ENTRIES, and its import graph reaches
//     no HTTP layer of the api (api/src/http/, routes, app.ts);
//   - api services (everything but routes, feature registration, http/ and the composition root) import nothing from api/src/http/;
//   - api/src/http/ imports nothing from api/src/accounts/;
//   - the operator's program reaches at most MAX_OPERATOR_CLOSURE files;
//   - the product code (api/src, operator/src, job-images, crds) has no import circle;
//   - the folder tree is the map: counted over api/src at the level of its first folders (and its
//     top-level files, the composition root, each on its own; a folder imports another when any
//     of its files imports one of the other's), no group of folders that reach each other holds
//     more than MAX_FOLDER_GROUP folders, and all such groups together hold at most
//     MAX_IMPORTS_IN_GROUPS of the folder-level imports.
// Usage: node hack/import-directions.ts
//        node hack/import-directions.ts --closure operator/src/main.ts   (the files an entry reaches, one per line)
//        node hack/import-directions.ts --folders                        (the folder groups and the imports inside them)
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));

/** What the operator may import from the api: the job host, the Kubernetes dispatcher, the domain's config and the shared job metrics. */
export const OPERATOR_API_ENTRIES = ['api/src/job-host.ts', 'api/src/jobs/kubernetes-dispatcher.ts', 'api/src/config.ts', 'api/src/ops/metrics.ts'] as const;

const PRODUCT_DIRS = ['api/src', 'operator/src', 'job-images', 'crds'];

/** The most api/src folders one group of folders that import each other may hold … */
export const MAX_FOLDER_GROUP = 5;
/** … and the most folder-level imports all such groups may hold together. */
export const MAX_IMPORTS_IN_GROUPS = 20;

/**
 * The most files the operator's program may reach (issue 37 counted 84 and asked for fewer): it
 * needs the job domain, not every feature's messages and entities (the api's message catalogs and
 * its list of every entity stay out of it).
 */
export const MAX_OPERATOR_CLOSURE = 83;

/** Repository files a module imports (static, including `import type`, and dynamic). */
async function importsOf(file: string): Promise<string[]> {
  const source = await readFile(join(root, file), 'utf8');
  const specifiers = [
    ...[...source.matchAll(/^(?:import|export)\s[^;]*?\sfrom\s+'([^']+)'/gms)].map((match) => match[1]!),
    ...[...source.matchAll(/import\('([^']+)'\)/g)].map((match) => match[1]!),
  ];
  return specifiers.filter((specifier) => specifier.startsWith('.')).map((specifier) => relative(root, join(root, dirname(file), specifier)));
}

async function tsFiles(dir: string): Promise<string[]> {
  const entries = await readdir(join(root, dir), { withFileTypes: true, recursive: true });
  return entries.filter((entry) => entry.isFile() && entry.name.endsWith('.ts')).map((entry) => relative(root, join(entry.parentPath, entry.name)));
}

/** Routes, edge schemas, guards and cookies, stream endpoints, feature registration, http/ and the composition root. */
const isHttpLayer = (file: string) =>
  file.startsWith('api/src/http/') || /\/(routes|feature|schemas|guards|cookies|stream)\.ts$/.test(file) || file === 'api/src/app.ts';
const isService = (file: string) => file.startsWith('api/src/') && !isHttpLayer(file) && file !== 'api/src/main.ts';

/** Every repository file `entries` reach through relative imports, the entries included, sorted. */
export async function closureOf(entries: readonly string[]): Promise<string[]> {
  const seen = new Set<string>();
  const pending = [...entries];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    pending.push(...(await importsOf(file)));
  }
  return [...seen].sort();
}

/** The import circles among `files` (strongly connected components of more than one module, or a module importing itself). */
export async function importCircles(files: readonly string[]): Promise<string[][]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) graph.set(file, (await importsOf(file)).filter((target) => known.has(target)));
  return circlesOf(graph);
}

/** The strongly connected components of `graph` with more than one node, or a node pointing at itself. */
function circlesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const files = [...graph.keys()];
  // Tarjan's algorithm, iterative so deep graphs cannot overflow the stack.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  let counter = 0;
  for (const start of files) {
    if (index.has(start)) continue;
    const work: { file: string; next: number }[] = [{ file: start, next: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work.at(-1)!;
      const targets = graph.get(frame.file)!;
      if (frame.next < targets.length) {
        const target = targets[frame.next++]!;
        if (!index.has(target)) {
          index.set(target, counter);
          low.set(target, counter++);
          stack.push(target);
          onStack.add(target);
          work.push({ file: target, next: 0 });
        } else if (onStack.has(target)) {
          low.set(frame.file, Math.min(low.get(frame.file)!, index.get(target)!));
        }
        continue;
      }
      work.pop();
      const parent = work.at(-1);
      if (parent) low.set(parent.file, Math.min(low.get(parent.file)!, low.get(frame.file)!));
      if (low.get(frame.file) !== index.get(frame.file)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== frame.file);
      if (component.length > 1 || targets.includes(frame.file)) circles.push(component.sort());
    }
  }
  return circles;
}


export interface FolderGroups {
  /** Groups of api/src folders that reach each other, largest first. */
  groups: { folders: string[]; importsInside: number }[];
  /** Folder-level imports in all: pairs (a, b) of distinct folders where a file of a imports one of b. */
  imports: number;
}

/**
 * The folders of `base` (api/src) as a graph: which reach each other, and how many of their
 * imports lie inside such groups. A file's unit is its first folder under `base`, or the file
 * itself at the top (the composition root).
 */
export async function folderGroups(base = 'api/src'): Promise<FolderGroups> {
  const folderOf = (file: string): string => file.slice(base.length + 1).split('/')[0]!;
  const graph = new Map<string, Set<string>>();
  for (const file of await tsFiles(base)) {
    const from = folderOf(file);
    if (!graph.has(from)) graph.set(from, new Set());
    for (const target of await importsOf(file)) {
      if (target.startsWith(`${base}/`) && folderOf(target) !== from) graph.get(from)!.add(folderOf(target));
    }
  }
  const edges = new Map([...graph].map(([folder, targets]) => [folder, [...targets].filter((target) => graph.has(target))]));
  const groups = circlesOf(edges)
    .map((folders) => ({ folders, importsInside: folders.reduce((sum, folder) => sum + edges.get(folder)!.filter((target) => folders.includes(target)).length, 0) }))
    .sort((a, b) => b.folders.length - a.folders.length);
  return { groups, imports: [...edges.values()].reduce((sum, targets) => sum + targets.length, 0) };
}

export async function importViolations(): Promise<string[]> {
  const violations: string[] = [];
  for (const file of await tsFiles('job-images')) {
    for (const target of await importsOf(file)) if (target.startsWith('api/')) violations.push(`${file} → ${target} (job images import nothing from the api)`);
  }
  for (const file of await tsFiles('api/src')) {
    for (const target of await importsOf(file)) {
      if (isService(file) && target.startsWith('api/src/http/')) violations.push(`${file} → ${target} (services know nothing of HTTP)`);
      if (file.startsWith('api/src/http/') && target.startsWith('api/src/accounts/')) violations.push(`${file} → ${target} (http/ knows no feature)`);
    }
  }
  const allowed = new Set<string>(OPERATOR_API_ENTRIES);
  for (const file of await tsFiles('operator/src')) {
    for (const target of await importsOf(file)) {
      if (target.startsWith('api/') && !allowed.has(target)) violations.push(`${file} → ${target} (the operator imports from the api only ${OPERATOR_API_ENTRIES.join(', ')})`);
    }
  }
  const operatorFiles = await closureOf(await tsFiles('operator/src'));
  for (const file of operatorFiles) {
    for (const target of await importsOf(file)) if (isHttpLayer(target)) violations.push(`${file} → ${target} (the operator reaches the api's HTTP layer)`);
  }
  const operatorProgram = await closureOf(['operator/src/main.ts']);
  if (operatorProgram.length > MAX_OPERATOR_CLOSURE) violations.push(`operator/src/main.ts reaches ${operatorProgram.length} files (at most ${MAX_OPERATOR_CLOSURE}: node hack/import-directions.ts --closure operator/src/main.ts)`);
  const product = (await Promise.all(PRODUCT_DIRS.map(tsFiles))).flat();
  for (const circle of await importCircles(product)) violations.push(`${circle.join(' → ')} (an import circle)`);
  const { groups } = await folderGroups();
  for (const group of groups.filter((each) => each.folders.length > MAX_FOLDER_GROUP)) {
    violations.push(`api/src folders ${group.folders.join(', ')} reach each other (at most ${MAX_FOLDER_GROUP} may)`);
  }
  const inside = groups.reduce((sum, group) => sum + group.importsInside, 0);
  if (inside > MAX_IMPORTS_IN_GROUPS) violations.push(`${inside} folder-level imports lie inside groups of api/src folders that reach each other (at most ${MAX_IMPORTS_IN_GROUPS})`);
  return violations;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const closureAt = process.argv.indexOf('--closure');
  if (closureAt >= 0) {
    for (const file of await closureOf(process.argv.slice(closureAt + 1))) console.log(file);
  } else if (process.argv.includes('--folders')) {
    const { groups, imports } = await folderGroups();
    for (const group of groups) console.log(`${group.folders.length} folders reach each other, ${group.importsInside} imports inside: ${group.folders.join(' ')}`);
    console.log(`${groups.reduce((sum, group) => sum + group.importsInside, 0)} of ${imports} folder-level imports inside groups; the largest group ${groups[0]?.folders.length ?? 0} folders`);
  } else {
    const violations = await importViolations();
    for (const line of violations) console.log(line);
    console.log(`${violations.length} import(s) against the architecture`);
    process.exitCode = violations.length > 0 ? 1 : 0;
  }
}
