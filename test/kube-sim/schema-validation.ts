// What the API server does with a custom resource body: prune fields the CRD's
// structural schema does not know, then validate the rest against it (422 on failure).
import { Ajv } from 'ajv';
import type { ErrorObject, Format } from 'ajv';
import type { StatusCause } from './status-error.ts';

export type OpenApiSchema = { [keyword: string]: unknown };

// go-openapi's strfmt rules, which is what the API server checks `format` with.
const formats: Record<string, Format> = {
  uuid: /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i,
  'date-time': (value: string) =>
    /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(value) &&
    !Number.isNaN(Date.parse(value)),
  int32: true,
  int64: true,
  byte: /^[A-Za-z0-9+/]*={0,2}$/,
};

const listKey = (item: unknown, keys: string[]) =>
  JSON.stringify(keys.map((k) => (item && typeof item === 'object' ? (item as Record<string, unknown>)[k] : undefined)));

function createAjv(): Ajv {
  const ajv = new Ajv({ allErrors: true, verbose: true, strict: true, formats });
  for (const keyword of [
    'x-kubernetes-preserve-unknown-fields',
    'x-kubernetes-list-map-keys',
    'x-kubernetes-map-type',
    'x-kubernetes-int-or-string',
    'x-kubernetes-embedded-resource',
    'x-kubernetes-validations',
    'example',
  ]) {
    ajv.addKeyword({ keyword });
  }
  // Lists of type map or set may not repeat a key (the API server's "Duplicate value").
  const unique: ((listType: string, data: unknown[], parent?: OpenApiSchema) => boolean) & {
    errors?: Partial<ErrorObject>[];
  } = (listType, data, parent) => {
    if (listType !== 'map' && listType !== 'set') return true;
    const keys = listType === 'map' ? ((parent?.['x-kubernetes-list-map-keys'] as string[]) ?? []) : [];
    const seen = new Set<string>();
    for (const [index, item] of data.entries()) {
      const key = listType === 'map' ? listKey(item, keys) : JSON.stringify(item);
      if (seen.has(key)) {
        unique.errors = [{ keyword: 'x-kubernetes-list-type', message: 'Duplicate value', params: { index, key } }];
        return false;
      }
      seen.add(key);
    }
    return true;
  };
  ajv.addKeyword({ keyword: 'x-kubernetes-list-type', type: 'array', errors: true, validate: unique });
  return ajv;
}

// Removes, in place, the fields the schema does not declare and returns their paths.
export function pruneUnknownFields(value: unknown, schema: OpenApiSchema, path = ''): string[] {
  if (Array.isArray(value)) {
    const items = schema['items'] as OpenApiSchema | undefined;
    return items ? value.flatMap((item, i) => pruneUnknownFields(item, items, `${path}[${i}]`)) : [];
  }
  if (!value || typeof value !== 'object') return [];
  const object = value as Record<string, unknown>;
  const properties = schema['properties'] as Record<string, OpenApiSchema> | undefined;
  const additional = schema['additionalProperties'];
  const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
  const pruned: string[] = [];
  for (const key of Object.keys(object)) {
    const child = `${path ? `${path}.` : ''}${key}`;
    const declared = properties?.[key] ?? (typeof additional === 'object' && additional ? (additional as OpenApiSchema) : undefined);
    // ObjectMeta is the API server's own business, never pruned by the CRD schema.
    if (path === '' && key === 'metadata') continue;
    if (declared) pruned.push(...pruneUnknownFields(object[key], declared, child));
    else if (!preserve && additional !== true) {
      delete object[key];
      pruned.push(child);
    }
  }
  return pruned;
}

const fieldPath = (instancePath: string) =>
  instancePath
    .split('/')
    .slice(1)
    .map((step) => step.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce((path, step) => (/^\d+$/.test(step) ? `${path}[${step}]` : path ? `${path}.${step}` : step), '');

const quoted = (value: unknown) => JSON.stringify(value);
const jsonType = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

// Messages in the API server's words, so that tests and logs read the same as against a cluster.
function causeOf(error: ErrorObject): StatusCause {
  const at = fieldPath(error.instancePath);
  const field = at || '<root>';
  const value = error.data;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required': {
      const missing = `${at ? `${at}.` : ''}${String(params['missingProperty'])}`;
      return { reason: 'FieldValueRequired', message: `${missing}: Required value`, field: missing };
    }
    case 'type':
      return {
        reason: 'FieldValueTypeInvalid',
        message: `${field}: Invalid value: "${jsonType(value)}": ${field} in body must be of type ${String(params['type'])}: ${quoted(jsonType(value))}`,
        field,
      };
    case 'enum':
      return {
        reason: 'FieldValueNotSupported',
        message: `${field}: Unsupported value: ${quoted(value)}: supported values: ${(params['allowedValues'] as unknown[]).map(quoted).join(', ')}`,
        field,
      };
    case 'format':
      return {
        reason: 'FieldValueInvalid',
        message: `${field}: Invalid value: ${quoted(value)}: ${field} in body must be of type ${String(params['format'])}: ${quoted(value)}`,
        field,
      };
    case 'pattern':
      return {
        reason: 'FieldValueInvalid',
        message: `${field}: Invalid value: ${quoted(value)}: ${field} in body should match '${String(params['pattern'])}'`,
        field,
      };
    case 'minimum':
    case 'maximum': {
      const bound = error.keyword === 'minimum' ? 'greater' : 'less';
      return {
        reason: 'FieldValueInvalid',
        message: `${field}: Invalid value: ${quoted(value)}: ${field} in body should be ${bound} than or equal to ${String(params['limit'])}`,
        field,
      };
    }
    case 'minLength':
      return {
        reason: 'FieldValueInvalid',
        message: `${field}: Invalid value: ${quoted(value)}: ${field} in body should be at least ${String(params['limit'])} chars long`,
        field,
      };
    case 'maxLength':
      return { reason: 'FieldValueTooLong', message: `${field}: Too long: may not be longer than ${String(params['limit'])}`, field };
    case 'x-kubernetes-list-type': {
      const duplicate = `${field}[${String(params['index'])}]`;
      return { reason: 'FieldValueDuplicate', message: `${duplicate}: Duplicate value: ${String(params['key'])}`, field: duplicate };
    }
    default:
      return {
        reason: 'FieldValueInvalid',
        message: `${field}: Invalid value: ${quoted(value)}: ${field} in body ${error.message ?? 'is invalid'}`,
        field,
      };
  }
}

export type ObjectValidator = (object: unknown) => StatusCause[];

const ajv = createAjv();

export function compileValidator(schema: OpenApiSchema): ObjectValidator {
  const validate = ajv.compile(schema);
  return (object) => (validate(object) ? [] : (validate.errors ?? []).map(causeOf));
}
