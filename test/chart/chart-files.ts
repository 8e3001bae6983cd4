/**
 * Reads charts/cutroom without Helm (none can run on these machines): the values,
 * the schema, and the templates as YAML once their template actions are stripped.
 * Stripping keeps every branch of every if/with/range, so a stripped template shows
 * the shape of all its outcomes at once, never one real rendering.
 */
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, parseAllDocuments } from 'yaml';
import { Ajv } from 'ajv';
import type { ValidateFunction } from 'ajv';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
export const chartDir = join(repoRoot, 'charts', 'cutroom');
export const templatesDir = join(chartDir, 'templates');

/** Stands where a template action wrote a value. */
export const PLACEHOLDER = 'TEMPLATE';

export type Values = Record<string, unknown>;

export function readChartFile(path: string): string {
  return readFileSync(join(chartDir, path), 'utf8');
}

export function readValues(path = 'values.yaml'): Values {
  return parse(readChartFile(path)) as Values;
}

function isMap(value: unknown): value is Values {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Helm's coalescing of a values file over the chart defaults: maps merge, everything else replaces. */
export function mergeValues(base: Values, override: Values): Values {
  const merged: Values = { ...base };
  for (const [key, value] of Object.entries(override)) {
    const current = merged[key];
    merged[key] = isMap(current) && isMap(value) ? mergeValues(current, value) : value;
  }
  return merged;
}

export function schemaValidator(): ValidateFunction {
  // Helm reads values.schema.json as JSON Schema draft-07, which is Ajv's default draft.
  const ajv = new Ajv({ allErrors: true, strict: true });
  return ajv.compile(JSON.parse(readChartFile('values.schema.json')));
}

/** Template files relative to templates/, helpers and NOTES.txt included. */
export function templateFiles(): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else found.push(relative(templatesDir, path));
    }
  };
  walk(templatesDir);
  return found.sort();
}

export function manifestTemplates(): string[] {
  return templateFiles().filter((file) => file.endsWith('.yaml'));
}

export function readTemplate(file: string): string {
  return readFileSync(join(templatesDir, file), 'utf8');
}

const COMMENT = /\{\{-?\s*\/\*[\s\S]*?\*\/\s*-?\}\}/g;
const ACTION = /\{\{(?:(?!\}\}).)*\}\}/g;
const ACTIONS_ONLY_LINE = /^\s*(?:\{\{(?:(?!\}\}).)*\}\}\s*)+$/;

/** Drops comments and lines made only of actions; every other action becomes PLACEHOLDER. */
export function stripTemplateActions(text: string): string {
  return text
    .replace(COMMENT, '')
    .split('\n')
    .filter((line) => !ACTIONS_ONLY_LINE.test(line))
    .map((line) => line.replace(ACTION, PLACEHOLDER))
    .join('\n');
}

export interface StrippedDocument {
  errors: string[];
  value: unknown;
}

/** The YAML documents of a stripped template; keys repeated by alternative branches are allowed. */
export function strippedDocuments(file: string): StrippedDocument[] {
  return parseAllDocuments(stripTemplateActions(readTemplate(file)), { uniqueKeys: false })
    .map((document) => ({ errors: document.errors.map((error) => error.message), value: document.toJS() as unknown }))
    .filter((document) => document.value !== null || document.errors.length > 0);
}

/** Manifests (objects with a kind) of a stripped template. */
export function strippedManifests(file: string): Values[] {
  return strippedDocuments(file)
    .map((document) => document.value)
    .filter((value): value is Values => isMap(value) && typeof value.kind === 'string');
}

export function asMap(value: unknown): Values {
  return isMap(value) ? value : {};
}

export function asList(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** Names of `define`d templates in a text. */
export function definedTemplates(text: string): string[] {
  return [...text.matchAll(/\{\{-?\s*define\s+"([^"]+)"/g)].map((match) => match[1] ?? '');
}

/** Names given literally to `include` or `template` in a text (includes of computed paths are left out). */
export function includedTemplates(text: string): string[] {
  return [...text.matchAll(/\b(?:include|template)\s+"([^"]+)"/g)].map((match) => match[1] ?? '');
}

/** Value paths a template reads: `.Values.a.b`, `$.Values.a.b`, `.ctx.Values.a.b`, and `$x.b` after `$x := .Values.a`. */
export function valuePaths(text: string): string[] {
  const paths = [...text.matchAll(/\bValues\.([A-Za-z0-9_.]+)/g)].map((match) => match[1] ?? '');
  for (const alias of text.matchAll(/\$(\w+)\s*:=\s*\.Values\.([A-Za-z0-9_.]+)/g)) {
    const [, name, target] = alias;
    for (const use of text.matchAll(new RegExp(`\\$${name}\\.([A-Za-z0-9_.]+)`, 'g'))) {
      paths.push(`${target}.${use[1]}`);
    }
  }
  return [...new Set(paths.map((path) => path.replace(/\.$/, '')))];
}

export function topLevelCrdFile(name: string): string | undefined {
  const path = join(repoRoot, 'crds', name);
  return existsSync(path) ? path : undefined;
}
