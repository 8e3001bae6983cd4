import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { TestApp } from './harness.ts';

/* eslint-disable @typescript-eslint/no-explicit-any -- the document is JSON as served */

/** One request the app answered, checked against the served OpenAPI document. */
export interface Exchange {
  method: string;
  /** The document's path template the request matched. */
  template: string;
  status: number;
}

export interface ContractCheck {
  /** Every request answered while the check was on, with its operation. */
  readonly exchanges: Exchange[];
  /** What the document does not say about a real answer: a status it does not list, a body its schema refuses, a media type it does not declare. */
  readonly violations: string[];
  /** The served document. */
  readonly document: any;
  /** Back to the plain fetch. */
  stop(): void;
}

const escapePointer = (segment: string) => segment.replaceAll('~', '~0').replaceAll('/', '~1');

/**
 * A validator of values against a schema of the document, by JSON pointer: null when the
 * value is valid, else Ajv's errors as text. Ajv 2020 (OpenAPI 3.1's JSON Schema) with
 * formats; `$ref`s resolve inside the document.
 */
export function documentSchemas(document: any): (pointer: string) => (value: unknown) => string | null {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats.default(ajv);
  ajv.addSchema(document, 'openapi.json');
  const validators = new Map<string, ValidateFunction>();
  return (pointer) => {
    let validate = validators.get(pointer);
    if (!validate) validators.set(pointer, (validate = ajv.compile({ $ref: `openapi.json#${pointer}` })));
    const compiled = validate;
    return (value) => (compiled(value) ? null : ajv.errorsText(compiled.errors, { dataVar: 'body' }));
  };
}

/**
 * What the document's `webhooks` entry `name` says of a payload Cutroom sent: null when the
 * payload is the declared JSON body of that webhook's POST, else why not. For the webhook
 * tests, so every delivered event is checked against the document as responses are.
 */
export function checkWebhookPayload(document: any, name: string, payload: unknown): string | null {
  const operation = document.webhooks?.[name]?.post;
  if (!operation) return `the document has no webhook ${name} (webhooks: ${Object.keys(document.webhooks ?? {}).join(', ') || 'none'})`;
  if (!operation.requestBody?.content?.['application/json']) return `webhook ${name} declares no application/json body`;
  return documentSchemas(document)(`/webhooks/${escapePointer(name)}/post/requestBody/content/application~1json/schema`)(payload);
}

/**
 * Checks every answer the app gives through `app.fetch` (and so every Client of it) against
 * the document the app serves at /api/v1/openapi.json: the status is one the operation
 * lists (a 5xx may fall to `default`), the Content-Type is one it declares, and a JSON
 * body validates against the declared schema (Ajv, JSON Schema 2020-12 as OpenAPI 3.1
 * uses it, formats included). Generic: whatever operations and components the document
 * holds, including those added later, are checked the same way.
 */
export async function checkResponsesAgainstDocument(app: TestApp): Promise<ContractCheck> {
  const plainFetch = app.fetch;
  const document: any = await (await plainFetch('/api/v1/openapi.json')).json();
  const schemaAt = documentSchemas(document);
  const routes = Object.keys(document.paths as object)
    .map((template) => ({
      template,
      params: (template.match(/\{/g) ?? []).length,
      pattern: new RegExp(`^${template.replace(/\/$/, '').replace(/\{\w+\}/g, '[^/]+').replace(/[.]/g, '\\.')}/?$`),
    }))
    // A literal segment wins over a parameter: /media/play/{token} before /media/{id}/confirm.
    .sort((a, b) => a.params - b.params);

  const exchanges: Exchange[] = [];
  const violations: string[] = [];

  async function check(method: string, url: URL, response: Response): Promise<void> {
    const route = routes.find((candidate) => candidate.pattern.test(url.pathname) && document.paths[candidate.template][method]);
    if (!route) return; // not an operation of the api (an unknown route's 404, a presigned store URL)
    const where = `${method.toUpperCase()} ${route.template} → ${response.status}`;
    exchanges.push({ method, template: route.template, status: response.status });
    const responses = document.paths[route.template][method].responses as Record<string, any>;
    const key = String(response.status) in responses ? String(response.status) : response.status >= 500 && responses.default ? 'default' : undefined;
    if (!key) {
      violations.push(`${where}: status not listed (listed: ${Object.keys(responses).join(', ')})`);
      return;
    }
    // Headers the document says this answer always carries (rate-limit fields, Retry-After, …).
    for (const [name, header] of Object.entries((responses[key].headers ?? {}) as Record<string, any>)) {
      const required = (header.$ref ? document.components?.headers?.[header.$ref.split('/').pop()] : header)?.required === true;
      if (required && !response.headers.has(name)) violations.push(`${where}: the required header ${name} is missing`);
    }
    const declared = (responses[key].content ?? {}) as Record<string, any>;
    const contentType = (response.headers.get('content-type') ?? '').split(';')[0]!.trim();
    const bodyless = response.status === 204 || response.status === 304 || method === 'head';
    if (bodyless || (!contentType && Object.keys(declared).length === 0)) return;
    if (Object.keys(declared).length === 0) {
      // A redirect's courtesy body (text/plain, text/html) is no answer of the api's own.
      if (response.status >= 300 && response.status < 400) return;
      violations.push(`${where}: answers ${contentType || 'a body'} but the document declares no content`);
      return;
    }
    const mediaType = Object.keys(declared).find((type) => type === contentType || (type.endsWith('/*') && contentType.startsWith(type.slice(0, -1))));
    if (!mediaType) {
      violations.push(`${where}: Content-Type ${contentType} is not declared (declared: ${Object.keys(declared).join(', ')})`);
      return;
    }
    if (mediaType !== 'application/json') return; // streams and files: the media type is the contract
    const problem = schemaAt(`/paths/${escapePointer(route.template)}/${method}/responses/${key}/content/application~1json/schema`)(await response.clone().json());
    if (problem) violations.push(`${where}: body does not match its schema: ${problem}`);
  }

  app.fetch = async (path, init) => {
    const response = await plainFetch(path, init);
    const url = new URL(path, app.url);
    if (url.origin === new URL(app.url).origin) await check((init?.method ?? 'GET').toLowerCase(), url, response);
    return response;
  };
  return {
    exchanges,
    violations,
    document,
    stop: () => {
      app.fetch = plainFetch;
    },
  };
}
