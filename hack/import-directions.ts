// Prints every import that crosses a boundary the architecture forbids, one per line, and
// exits 1 when there is any:
//   - job-images/ imports nothing from api/ (the job contract lives in crds/, below both);
//   - the operator's import graph reaches no HTTP layer of the api (api/src/http/, routes, app.ts);
//   - api services (everything but routes, feature registration, http/ and the composition root) import nothing from api/src/http/;
//   - api/src/http/ imports nothing from api/src/accounts/.
// Then it prints the import circles among the product folders (api/src, operator/src,
// job-images, crds), one per line; they do not change the exit code.
// Usage: node hack/import-directions.ts
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));

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
  const seen = new Set<string>();
  const pending = await tsFiles('operator/src');
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const target of await importsOf(file)) {
      if (isHttpLayer(target)) violations.push(`${file} → ${target} (the operator reaches the api's HTTP layer)`);
      else pending.push(target);
    }
  }
  return violations;
}

/** The product folders whose import graph must hold no circle. */
export const PRODUCT_FOLDERS = ['api/src', 'operator/src', 'job-images', 'crds'] as const;

/**
 * One circle of imports (`import type` included: a circle of types still ties the files
 * together) per strongly connected group of files under the folders, as `a → b → … → a`.
 */
export async function importCycles(folders: readonly string[] = PRODUCT_FOLDERS): Promise<string[]> {
  const files = (await Promise.all(folders.map(tsFiles))).flat().sort();
  const known = new Set(files);
  const edges = new Map<string, string[]>();
  for (const file of files) edges.set(file, [...new Set(await importsOf(file))].filter((target) => known.has(target)).sort());
  // Tarjan: the groups of files that reach each other.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const groups: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    for (const target of edges.get(file)!) {
      if (!index.has(target)) visit(target);
      if (stack.includes(target)) low.set(file, Math.min(low.get(file)!, low.get(target)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const group = stack.splice(stack.indexOf(file));
    if (group.length > 1 || edges.get(file)!.includes(file)) groups.push(group);
  };
  for (const file of files) if (!index.has(file)) visit(file);
  // The shortest way round each group from its first file, found breadth first.
  return groups.map((group) => {
    const [start] = group.sort();
    const cameFrom = new Map<string, string>();
    const queue = [start!];
    while (queue.length > 0 && !cameFrom.has(start!)) {
      const file = queue.shift()!;
      for (const target of edges.get(file)!) {
        if (!group.includes(target) || cameFrom.has(target)) continue;
        cameFrom.set(target, file);
        queue.push(target);
      }
    }
    const between: string[] = [];
    for (let file = cameFrom.get(start!)!; file !== start; file = cameFrom.get(file)!) between.unshift(file);
    return [start!, ...between, start!].join(' → ');
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const violations = await importViolations();
  for (const line of violations) console.log(line);
  console.log(`${violations.length} import(s) against the architecture`);
  const cycles = await importCycles();
  for (const line of cycles) console.log(line);
  console.log(`${cycles.length} import circle(s) among ${PRODUCT_FOLDERS.join(', ')}`);
  process.exitCode = violations.length > 0 ? 1 : 0;
}
