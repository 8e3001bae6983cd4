import { readFile, writeFile } from 'node:fs/promises';
import { configTable, replaceConfigTable } from '../api/src/config-docs.ts';

/** Prints the configuration table, or with --write refreshes it in README.md. */
const readmePath = new URL('../README.md', import.meta.url);
if (process.argv.includes('--write')) {
  await writeFile(readmePath, replaceConfigTable(await readFile(readmePath, 'utf8')));
} else {
  console.log(configTable());
}
