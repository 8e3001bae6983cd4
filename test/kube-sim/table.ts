// Server-side printing: the meta.k8s.io/v1 Table that `kubectl get` asks for, built
// from a kind's printer columns the way the API server's CRD table convertor does.
import type { PrinterColumn } from '../../crds/contract/resources.ts';
import type { KubeObject, ResourceType } from './resource-types.ts';

export type IncludeObject = 'None' | 'Metadata' | 'Object';

export type Table = {
  kind: 'Table';
  apiVersion: 'meta.k8s.io/v1';
  metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number };
  columnDefinitions: { name: string; type: string; format: string; description: string; priority: number }[];
  rows: { cells: unknown[]; object?: unknown }[];
};

// True when the Accept header asks for a Table (kubectl sends it first, with JSON as fallback).
export function wantsTable(accept: string | undefined): boolean {
  return (accept ?? '').split(',').some((type) => {
    const params = type.split(';').map((p) => p.trim());
    return params.includes('as=Table') && params.includes('g=meta.k8s.io');
  });
}

// Simple JSONPath as CRD printer columns allow: `.a.b`, `.a[0].b`.
export function evaluateColumnPath(object: unknown, path: string): unknown {
  const steps = path.match(/[^.[\]]+|\[\d+\]/g) ?? [];
  let at: unknown = object;
  for (const step of steps) {
    if (at === null || typeof at !== 'object') return undefined;
    at = step.startsWith('[') ? (at as unknown[])[Number(step.slice(1, -1))] : (at as Record<string, unknown>)[step];
  }
  return at;
}

// kubectl's AGE column: "45s", "3m20s", "5h", "12d" (apimachinery's HumanDuration).
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  const withRest = (big: number, unit: string, rest: number, restUnit: string) =>
    rest === 0 ? `${big}${unit}` : `${big}${unit}${rest}${restUnit}`;
  if (minutes < 10) return withRest(minutes, 'm', seconds % 60, 's');
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return withRest(hours, 'h', minutes % 60, 'm');
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 8) return withRest(days, 'd', hours % 24, 'h');
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.floor(days / 365);
  if (hours < 24 * 365 * 8) return withRest(years, 'y', days % 365, 'd');
  return `${years}y`;
}

function cell(column: PrinterColumn, value: unknown, now: number): unknown {
  if (value === undefined || value === null) return null;
  switch (column.type) {
    case 'string':
      return typeof value === 'object' ? JSON.stringify(value) : String(value);
    case 'integer':
      return typeof value === 'number' ? Math.trunc(value) : null;
    case 'number':
      return typeof value === 'number' ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'date': {
      const at = typeof value === 'string' ? Date.parse(value) : Number.NaN;
      return Number.isNaN(at) ? '<invalid>' : humanDuration(now - at);
    }
  }
}

export function toTable(
  type: ResourceType,
  objects: KubeObject[],
  list: { resourceVersion: string; continue?: string; remainingItemCount?: number },
  includeObject: IncludeObject,
): Table {
  const now = Date.now();
  const rowObject = (object: KubeObject): { object?: unknown } => {
    if (includeObject === 'None') return {};
    if (includeObject === 'Object') return { object };
    return { object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: object.metadata } };
  };
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: {
      resourceVersion: list.resourceVersion,
      ...(list.continue ? { continue: list.continue, remainingItemCount: list.remainingItemCount ?? 0 } : {}),
    },
    columnDefinitions: [
      {
        name: 'Name',
        type: 'string',
        format: 'name',
        description: 'Name must be unique within a namespace.',
        priority: 0,
      },
      ...type.printerColumns.map((c) => ({
        name: c.name,
        type: c.type,
        format: '',
        description: c.description ?? `Custom resource definition column (in JSONPath format): ${c.jsonPath}`,
        priority: c.priority ?? 0,
      })),
    ],
    rows: objects.map((object) => ({
      cells: [object.metadata.name, ...type.printerColumns.map((c) => cell(c, evaluateColumnPath(object, c.jsonPath), now))],
      ...rowObject(object),
    })),
  };
}
