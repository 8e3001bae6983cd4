// labelSelector and fieldSelector as the API server parses them (the common subset).
import { badRequest } from './status-error.ts';

type Requirement =
  | { key: string; op: 'in' | 'notin'; values: string[] }
  | { key: string; op: 'exists' | '!exists' };

export type Selector = (labels: Record<string, string>) => boolean;

// Commas split requirements except inside the parentheses of `in (a,b)`.
function splitRequirements(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of text) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  parts.push(current);
  return parts.map((p) => p.trim()).filter((p) => p !== '');
}

const keyPattern = /^([a-z0-9A-Z]([-a-z0-9A-Z_./]*[a-z0-9A-Z])?)$/;
const valuePattern = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function parseRequirement(text: string): Requirement {
  const set = /^(\S+)\s+(in|notin)\s*\(([^)]*)\)$/.exec(text);
  if (set) {
    const values = set[3]!.split(',').map((v) => checkedValue(v.trim(), text));
    return { key: checkedKey(set[1]!, text), op: set[2] as 'in' | 'notin', values };
  }
  const equality = /^([^!=\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(text);
  if (equality) {
    const op = equality[2] === '!=' ? 'notin' : 'in';
    return { key: checkedKey(equality[1]!, text), op, values: [checkedValue(equality[3]!, text)] };
  }
  if (text.startsWith('!')) return { key: checkedKey(text.slice(1).trim(), text), op: '!exists' };
  return { key: checkedKey(text, text), op: 'exists' };
}

function checkedKey(key: string, requirement: string): string {
  if (!keyPattern.test(key)) throw badRequest(`unable to parse requirement: invalid label key "${key}" in "${requirement}"`);
  return key;
}

function checkedValue(value: string, requirement: string): string {
  if (value.length > 63 || !valuePattern.test(value)) {
    throw badRequest(`unable to parse requirement: invalid label value "${value}" in "${requirement}"`);
  }
  return value;
}

function matches(r: Requirement, labels: Record<string, string>): boolean {
  const has = Object.hasOwn(labels, r.key);
  switch (r.op) {
    case 'exists':
      return has;
    case '!exists':
      return !has;
    case 'in':
      return has && r.values.includes(labels[r.key]!);
    case 'notin':
      return !has || !r.values.includes(labels[r.key]!);
  }
}

export function parseLabelSelector(text: string | null | undefined): Selector {
  const requirements = splitRequirements(text ?? '').map(parseRequirement);
  return (labels) => requirements.every((r) => matches(r, labels));
}

// Field selectors compare dotted paths (`metadata.name`, `status.phase`) with = / == / !=.
export function parseFieldSelector(text: string | null | undefined): (object: unknown) => boolean {
  const requirements = splitRequirements(text ?? '').map((part) => {
    const m = /^([^!=\s]+)\s*(==|=|!=)\s*(.*)$/.exec(part);
    if (!m) throw badRequest(`invalid field selector: "${part}"`);
    return { path: m[1]!.split('.'), negate: m[2] === '!=', value: m[3]!.trim() };
  });
  return (object) =>
    requirements.every(({ path, negate, value }) => {
      let at: unknown = object;
      for (const step of path) at = at && typeof at === 'object' ? (at as Record<string, unknown>)[step] : undefined;
      const actual = at === undefined || at === null ? '' : String(at);
      return (actual === value) !== negate;
    });
}
