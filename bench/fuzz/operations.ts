/**
 * The operations of the served OpenAPI 3.1 document, as the fuzz suite and the access
 * matrices walk them: every path and method, its parameters, its body schema, and
 * whether the document marks it public (`security: []`, the router's `access: 'public'`).
 */

/** The JSON Schema keywords zod-to-openapi writes for Cutroom's route schemas. */
export interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  prefixItems?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  multipleOf?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  format?: string;
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  allOf?: JsonSchema[];
  default?: unknown;
  description?: string;
  propertyNames?: JsonSchema;
}

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required: boolean;
  schema: JsonSchema;
}

export interface RequestBodySpec {
  contentType: string;
  schema: JsonSchema;
  required: boolean;
}

export interface Operation {
  /** Upper case: GET, POST, … */
  method: string;
  /** The document's template: `/api/v1/media/{media_item_id}`. */
  path: string;
  /** `METHOD path`, for messages. */
  name: string;
  parameters: Parameter[];
  body: RequestBodySpec | undefined;
  /** The document lifts the session requirement (`security: []`). */
  public: boolean;
  /** Statuses the document declares (besides `default`). */
  statuses: number[];
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, RawOperation>>;
  components?: { schemas?: Record<string, JsonSchema> };
  security?: unknown[];
}

interface RawOperation {
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, { schema: JsonSchema }> };
  security?: unknown[];
  responses?: Record<string, unknown>;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
export const MUTATING_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Every operation of the document, in document order. */
export function operationsOf(document: OpenApiDocument): Operation[] {
  const operations: Operation[] = [];
  const sessionByDefault = (document.security ?? []).length > 0;
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const raw = item[method];
      if (!raw) continue;
      const content = Object.entries(raw.requestBody?.content ?? {})[0];
      operations.push({
        method: method.toUpperCase(),
        path,
        name: `${method.toUpperCase()} ${path}`,
        parameters: raw.parameters ?? [],
        body: content ? { contentType: content[0], schema: content[1].schema, required: raw.requestBody?.required ?? false } : undefined,
        public: raw.security ? raw.security.length === 0 : !sessionByDefault,
        statuses: Object.keys(raw.responses ?? {}).filter((status) => /^\d{3}$/.test(status)).map(Number),
      });
    }
  }
  return operations;
}

/** A schema with its `$ref` chain followed into `components.schemas`. */
export function resolve(document: OpenApiDocument, schema: JsonSchema): JsonSchema {
  let current = schema;
  for (let hops = 0; current.$ref; hops++) {
    const name = current.$ref.replace('#/components/schemas/', '');
    const target = document.components?.schemas?.[name];
    if (!target || hops > 32) throw new Error(`unresolvable $ref ${current.$ref}`);
    current = target;
  }
  return current;
}

/** Path and query parameters that name a resource: the document types them `format: uuid`. */
export function idParameters(document: OpenApiDocument, operation: Operation): Parameter[] {
  return operation.parameters.filter((parameter) => (parameter.in === 'path' || parameter.in === 'query') && resolve(document, parameter.schema).format === 'uuid');
}

/** The operation's address with its path parameters filled (values already URL-encoded) and a query string. */
export function addressOf(operation: Operation, pathValues: Record<string, string>, query: [string, string][] = []): string {
  const path = operation.path.replace(/\{(\w+)\}/g, (_whole, name: string) => {
    const value = pathValues[name];
    if (value === undefined) throw new Error(`${operation.name}: no value for path parameter ${name}`);
    return value;
  });
  return query.length ? `${path}?${query.map(([name, value]) => `${name}=${value}`).join('&')}` : path;
}
