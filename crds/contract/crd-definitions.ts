// Builds the CustomResourceDefinitions from crds/contract/resources.ts; hack/gen-crds.ts writes
// them out and test/crds checks the committed YAML is what this produces.
import { z } from 'zod';
import { stringify } from 'yaml';
import {
  cutroomCategory,
  cutroomGroup,
  cutroomVersion,
  jobKindList,
  jobSpecSchema,
  jobStatusSchema,
  printerColumns,
} from './resources.ts';
import type { JobKindNames, PrinterColumn } from './resources.ts';

export type StructuralSchema = { [keyword: string]: unknown };

export type CustomResourceDefinition = {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels: Record<string, string> };
  spec: {
    group: string;
    scope: 'Namespaced';
    names: {
      kind: string;
      listKind: string;
      plural: string;
      singular: string;
      shortNames: string[];
      categories: string[];
    };
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      subresources: { status: Record<string, never> };
      additionalPrinterColumns: PrinterColumn[];
      schema: { openAPIV3Schema: StructuralSchema };
    }[];
  };
};

// The JSONSchemaProps keywords a CRD accepts; anything else must fail the generator, not the cluster.
const allowedKeywords = new Set([
  'type', 'format', 'title', 'description', 'default', 'enum', 'nullable', 'example',
  'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum', 'multipleOf',
  'maxLength', 'minLength', 'pattern', 'maxItems', 'minItems',
  'maxProperties', 'minProperties', 'required', 'properties', 'additionalProperties', 'items',
  'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-list-type', 'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type', 'x-kubernetes-int-or-string', 'x-kubernetes-embedded-resource',
  'x-kubernetes-validations',
]);

// zod's JSON Schema, cut down to the structural subset Kubernetes requires.
export function structuralSchema(schema: z.ZodType): StructuralSchema {
  const json = z.toJSONSchema(schema, { target: 'openapi-3.0', io: 'input', unrepresentable: 'throw' });
  return toStructural(json as StructuralSchema, 'schema');
}

function toStructural(node: StructuralSchema, at: string): StructuralSchema {
  const out: StructuralSchema = {};
  const preserveUnknown = node['x-kubernetes-preserve-unknown-fields'] === true;
  for (const [keyword, value] of Object.entries(node)) {
    if (keyword === '$schema') continue;
    // Free-form maps keep whatever arrives; a nested additionalProperties {} has no type and is not structural.
    if (preserveUnknown && (keyword === 'additionalProperties' || keyword === 'propertyNames')) continue;
    // The API server prunes unknown fields instead of rejecting them, and forbids `false` next to properties.
    if (keyword === 'additionalProperties' && value === false) continue;
    if (keyword === 'const') {
      out['enum'] = [value];
      continue;
    }
    if (!allowedKeywords.has(keyword)) throw new Error(`${at}: keyword ${keyword} has no place in a CRD schema`);
    out[keyword] = structuralChild(keyword, value, `${at}.${keyword}`);
  }
  // Structural means typed at every level; unions (anyOf, oneOf) have no single type and are refused above.
  if (typeof out['type'] !== 'string' && !preserveUnknown) throw new Error(`${at}: no type; a CRD schema needs one at every level`);
  return out;
}

function structuralChild(keyword: string, value: unknown, at: string): unknown {
  switch (keyword) {
    case 'properties':
      return Object.fromEntries(
        Object.entries(value as Record<string, StructuralSchema>).map(([name, child]) => [
          name,
          toStructural(child, `${at}.${name}`),
        ]),
      );
    case 'items':
      return toStructural(value as StructuralSchema, at);
    case 'additionalProperties':
      return typeof value === 'object' && value !== null ? toStructural(value as StructuralSchema, at) : value;
    default:
      return value;
  }
}

function resourceSchema(names: JobKindNames): StructuralSchema {
  return {
    type: 'object',
    description: `${names.kind} runs one Cutroom job program as a batch/v1 Job and reports on it.`,
    required: ['spec'],
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'object' },
      spec: structuralSchema(jobSpecSchema),
      status: structuralSchema(jobStatusSchema),
    },
  };
}

function customResourceDefinition(names: JobKindNames): CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${names.plural}.${cutroomGroup}`,
      labels: { 'app.kubernetes.io/part-of': 'cutroom' },
    },
    spec: {
      group: cutroomGroup,
      scope: 'Namespaced',
      names: {
        kind: names.kind,
        listKind: names.listKind,
        plural: names.plural,
        singular: names.singular,
        shortNames: [...names.shortNames],
        categories: [cutroomCategory],
      },
      versions: [
        {
          name: cutroomVersion,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: printerColumns(names),
          schema: { openAPIV3Schema: resourceSchema(names) },
        },
      ],
    },
  };
}

export type CrdFile = { fileName: string; text: string };

export function crdFiles(): CrdFile[] {
  return jobKindList.map((names) => {
    const crd = customResourceDefinition(names);
    return {
      fileName: `${crd.metadata.name}.yaml`,
      text:
        '# Generated by hack/gen-crds.ts from crds/contract/resources.ts; edit those, then run it.\n' +
        stringify(crd, { lineWidth: 0, aliasDuplicateObjects: false }),
    };
  });
}
