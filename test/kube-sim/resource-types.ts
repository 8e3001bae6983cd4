// The kinds the simulator serves: a few built-ins the operator touches, plus every
// CustomResourceDefinition found in crds/*.yaml (validated against its schema).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { PrinterColumn } from '../../crds/contract/resources.ts';
import { compileValidator, pruneUnknownFields } from './schema-validation.ts';
import type { OpenApiSchema } from './schema-validation.ts';
import type { StatusCause } from './status-error.ts';

export type ObjectMeta = {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  [field: string]: unknown;
};

export type OwnerReference = {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
};

export type KubeObject = {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: unknown;
  status?: unknown;
  [field: string]: unknown;
};

export type ResourceType = {
  group: string;
  version: string;
  apiVersion: string;
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  categories: string[];
  statusSubresource: boolean;
  // Custom resources: status dropped on create, resourceVersion required on PUT, no strategic merge patch.
  custom: boolean;
  // batch/v1 Jobs deleted through the API orphan their pods unless told otherwise.
  defaultPropagation: 'Background' | 'Orphan';
  printerColumns: PrinterColumn[];
  // Status a fresh object starts with (the API server resets it on create); undefined drops it.
  initialStatus: () => unknown;
  // Removes unknown fields in place and returns their paths (pruning, for custom resources).
  prune: (object: KubeObject) => string[];
  validate: (object: KubeObject) => StatusCause[];
  // Server-side defaults applied on create, after metadata is set.
  applyDefaults: (object: KubeObject) => void;
};

const age: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };
const required = (field: string): StatusCause => ({ reason: 'FieldValueRequired', message: `${field}: Required value`, field });
const nothing = () => [];

const record = (value: unknown): Record<string, unknown> =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

function containerCauses(podSpec: unknown, at: string): StatusCause[] {
  const containers = record(podSpec)['containers'];
  if (!Array.isArray(containers) || containers.length === 0) return [required(`${at}.containers`)];
  return containers.flatMap((c, i) => [
    ...(record(c)['name'] ? [] : [required(`${at}.containers[${i}].name`)]),
    ...(record(c)['image'] ? [] : [required(`${at}.containers[${i}].image`)]),
  ]);
}

function builtin(
  fields: Pick<ResourceType, 'group' | 'version' | 'kind' | 'plural' | 'shortNames' | 'categories' | 'statusSubresource'> &
    Partial<ResourceType>,
): ResourceType {
  return {
    apiVersion: fields.group ? `${fields.group}/${fields.version}` : fields.version,
    listKind: `${fields.kind}List`,
    singular: fields.kind.toLowerCase(),
    custom: false,
    defaultPropagation: 'Background',
    printerColumns: [age],
    initialStatus: () => undefined,
    prune: nothing,
    validate: nothing,
    applyDefaults: () => {},
    ...fields,
  };
}

const jobs = builtin({
  group: 'batch',
  version: 'v1',
  kind: 'Job',
  plural: 'jobs',
  shortNames: [],
  categories: ['all'],
  statusSubresource: true,
  defaultPropagation: 'Orphan',
  printerColumns: [
    { name: 'Succeeded', type: 'integer', jsonPath: '.status.succeeded' },
    { name: 'Failed', type: 'integer', jsonPath: '.status.failed' },
    age,
  ],
  initialStatus: () => ({}),
  validate: (job) => {
    const spec = record(job.spec);
    const template = record(spec['template']);
    const podSpec = template['spec'];
    const causes: StatusCause[] = [];
    // The job-name label carries the name, so it must fit a label value.
    if ((job.metadata.name ?? '').length > 63) {
      causes.push({ reason: 'FieldValueInvalid', message: 'metadata.name: Invalid value: must be no more than 63 characters', field: 'metadata.name' });
    }
    if (!podSpec) return [...causes, required('spec.template.spec')];
    const restartPolicy = record(podSpec)['restartPolicy'];
    if (restartPolicy !== 'Never' && restartPolicy !== 'OnFailure') {
      causes.push({
        reason: 'FieldValueNotSupported',
        message: `spec.template.spec.restartPolicy: Unsupported value: ${JSON.stringify(restartPolicy ?? '')}: supported values: "OnFailure", "Never"`,
        field: 'spec.template.spec.restartPolicy',
      });
    }
    return [...causes, ...containerCauses(podSpec, 'spec.template.spec')];
  },
  applyDefaults: (job) => {
    const { name = '', uid = '' } = job.metadata;
    const spec = record(job.spec);
    const template = record(spec['template']);
    const templateMeta = record(template['metadata']);
    templateMeta['labels'] = {
      ...record(templateMeta['labels']),
      'batch.kubernetes.io/controller-uid': uid,
      'batch.kubernetes.io/job-name': name,
      'controller-uid': uid,
      'job-name': name,
    };
    template['metadata'] = templateMeta;
    spec['selector'] ??= { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } };
    spec['backoffLimit'] ??= 6;
    spec['completions'] ??= 1;
    spec['parallelism'] ??= 1;
  },
});

const pods = builtin({
  group: '',
  version: 'v1',
  kind: 'Pod',
  plural: 'pods',
  shortNames: ['po'],
  categories: ['all'],
  statusSubresource: true,
  printerColumns: [{ name: 'Status', type: 'string', jsonPath: '.status.phase' }, age],
  initialStatus: () => ({ phase: 'Pending' }),
  validate: (pod) => containerCauses(pod.spec, 'spec'),
});

const events = builtin({ group: '', version: 'v1', kind: 'Event', plural: 'events', shortNames: ['ev'], categories: [], statusSubresource: false });

const leases = builtin({
  group: 'coordination.k8s.io',
  version: 'v1',
  kind: 'Lease',
  plural: 'leases',
  shortNames: [],
  categories: [],
  statusSubresource: false,
  printerColumns: [{ name: 'Holder', type: 'string', jsonPath: '.spec.holderIdentity' }, age],
});

type CrdDocument = {
  kind?: string;
  spec: {
    group: string;
    names: { kind: string; listKind?: string; plural: string; singular?: string; shortNames?: string[]; categories?: string[] };
    versions: {
      name: string;
      served: boolean;
      subresources?: { status?: object };
      additionalPrinterColumns?: PrinterColumn[];
      schema: { openAPIV3Schema: OpenApiSchema };
    }[];
  };
};

export function customResourceTypes(crd: CrdDocument): ResourceType[] {
  const { group, names } = crd.spec;
  return crd.spec.versions
    .filter((v) => v.served)
    .map((v) => {
      const schema = v.schema.openAPIV3Schema;
      const validateSchema = compileValidator(schema);
      return {
        group,
        version: v.name,
        apiVersion: `${group}/${v.name}`,
        kind: names.kind,
        listKind: names.listKind ?? `${names.kind}List`,
        plural: names.plural,
        singular: names.singular ?? names.kind.toLowerCase(),
        shortNames: names.shortNames ?? [],
        categories: names.categories ?? [],
        statusSubresource: v.subresources?.status !== undefined,
        custom: true,
        defaultPropagation: 'Background',
        printerColumns: v.additionalPrinterColumns ?? [age],
        initialStatus: () => undefined,
        prune: (object) => pruneUnknownFields(object, schema),
        validate: (object) => validateSchema(object),
        applyDefaults: () => {},
      };
    });
}

export function loadCustomResourceTypes(crdDir: string): ResourceType[] {
  return readdirSync(crdDir)
    .filter((file) => file.endsWith('.yaml') || file.endsWith('.yml'))
    .sort()
    .flatMap((file) => parseAllDocuments(readFileSync(join(crdDir, file), 'utf8')).map((doc) => doc.toJS() as CrdDocument))
    .filter((doc) => doc?.kind === 'CustomResourceDefinition')
    .flatMap(customResourceTypes);
}

export const builtinTypes: readonly ResourceType[] = [pods, events, jobs, leases];

export class ResourceTypes {
  readonly all: readonly ResourceType[];

  constructor(types: readonly ResourceType[]) {
    this.all = types;
  }

  find(group: string, version: string, plural: string): ResourceType | undefined {
    return this.all.find((t) => t.group === group && t.version === version && t.plural === plural);
  }

  // Plurals are unique among the kinds served here, so tests name a kind by its plural alone.
  byPlural(plural: string): ResourceType {
    const type = this.all.find((t) => t.plural === plural);
    if (!type) throw new Error(`kube-sim serves no resource named ${plural}`);
    return type;
  }

  byKind(apiVersion: string, kind: string): ResourceType | undefined {
    return this.all.find((t) => t.apiVersion === apiVersion && t.kind === kind);
  }

  groups(): { group: string; versions: string[] }[] {
    const groups = new Map<string, string[]>();
    for (const t of this.all) {
      const versions = groups.get(t.group) ?? [];
      if (!versions.includes(t.version)) versions.push(t.version);
      groups.set(t.group, versions);
    }
    return [...groups].map(([group, versions]) => ({ group, versions }));
  }
}
