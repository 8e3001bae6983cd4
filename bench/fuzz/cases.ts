/**
 * Fuzz cases of one operation: a conforming request with exactly one thing broken (a body
 * field, a required field gone, the whole body, its JSON text, its content type, a query
 * or path parameter), or conforming at the edges of every range. Each case is a plain
 * request, so a finding is printed and replayed as it was sent.
 */
import { addressOf, MUTATING_METHODS, resolve, type OpenApiDocument, type Operation } from './operations.ts';
import type { Seeded } from './random.ts';
import { conformingValue, seededUuid, slotsOf, violatingValue, withSlot, type IdLookup, type ValueContext } from './values.ts';

export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface FuzzCase {
  operation: Operation;
  /** What was broken, in words: `body.start_ms: maximum + 1`. */
  label: string;
  request: FuzzRequest;
}

/** Anyone who can send a request to the app as some user (cookies and X-CSRF-Token included). */
export interface Actor {
  userId: string;
  fetch(path: string, init?: RequestInit): Promise<Response>;
}

export interface Outcome {
  status: number;
  contentType: string;
  text: string;
}

/** Raw path segments and query values no conforming value produces: bad percent-encodings, traversal, NUL, size. */
const HOSTILE_SEGMENTS = ['not-a-uuid', '%00', '%E0%A4%A', '%', '..%2F..%2Fetc', '%2e%2e', 'a'.repeat(5000), '%F0%9F%8E%AC', '00000000-0000-0000-0000-000000000000', '%20', '-1', '1e999', 'null', '[object Object]', '%C0%AF'];
const HOSTILE_QUERY_VALUES = [...HOSTILE_SEGMENTS, '', '99999999999999999999', '1.5', '-0', 'true', 'NaN', 'Infinity', '0x10', '%EF%BF%BF'];
const WRONG_CONTENT_TYPES = ['text/plain', 'application/xml', 'multipart/form-data; boundary=x', 'application/json; charset=utf-16', 'application/json; charset=latin1', 'application/octet-stream', 'application/x-www-form-urlencoded', '', 'application/merge-patch+json', 'text/html; charset=utf-8'];
const LANGUAGES = ['en', 'pt-BR', 'es;q=0.5, en;q=0.1', 'xx', '*', 'pt;q=abc', ',,,', 'en-'.repeat(300)];

/** The form encoding of an object: arrays repeat the key, objects go as JSON. */
function formEncode(value: unknown): string {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return String(value);
  const form = new URLSearchParams();
  for (const [name, field] of Object.entries(value)) {
    for (const one of Array.isArray(field) ? field : [field]) form.append(name, one !== null && typeof one === 'object' ? JSON.stringify(one) : String(one));
  }
  return form.toString();
}

type Kind = 'valid' | 'edges' | 'body-field' | 'body-missing' | 'body-whole' | 'body-text' | 'content-type' | 'unexpected-body' | 'query' | 'path' | 'language';

export class CaseMaker {
  readonly #document: OpenApiDocument;
  readonly #ids: IdLookup;

  constructor(document: OpenApiDocument, ids: IdLookup) {
    this.#document = document;
    this.#ids = ids;
  }

  /** The kinds of case that apply to the operation. */
  kindsOf(operation: Operation): Kind[] {
    const kinds: Kind[] = ['valid', 'edges', 'language'];
    if (operation.body) kinds.push('body-field', 'body-field', 'body-field', 'body-missing', 'body-whole', 'body-text', 'content-type');
    else if (MUTATING_METHODS.has(operation.method)) kinds.push('unexpected-body');
    if (operation.parameters.some((parameter) => parameter.in === 'query')) kinds.push('query', 'query');
    else kinds.push('query');
    if (operation.parameters.some((parameter) => parameter.in === 'path')) kinds.push('path', 'path');
    return kinds;
  }

  /**
   * A request that conforms to the operation's schemas, every id parameter (path and
   * query, required or not) and every id-named body field filled from the lookup.
   */
  conforming(operation: Operation, random: Seeded): FuzzRequest {
    const context: ValueContext = { document: this.#document, random, ids: this.#ids };
    const pathValues: Record<string, string> = {};
    const query: [string, string][] = [];
    for (const parameter of operation.parameters) {
      const value = () => encodeURIComponent(String(conformingValue(parameter.schema, context, parameter.name)));
      if (parameter.in === 'path') pathValues[parameter.name] = value();
      else if (parameter.in === 'query' && (parameter.required || resolve(this.#document, parameter.schema).format === 'uuid')) query.push([parameter.name, value()]);
    }
    const request: FuzzRequest = { method: operation.method, path: addressOf(operation, pathValues, query), headers: {} };
    if (operation.body && operation.method !== 'GET') {
      const body = conformingValue(operation.body.schema, context);
      request.headers['Content-Type'] = operation.body.contentType;
      request.body = operation.body.contentType.includes('form') ? formEncode(body) : JSON.stringify(body);
    }
    return request;
  }

  /** One case of the operation, drawn from `random`. */
  make(operation: Operation, random: Seeded): FuzzCase {
    const kind = random.pick(this.kindsOf(operation));
    const context: ValueContext = { document: this.#document, random, ids: this.#ids, edges: kind === 'edges' };
    const pathValues: Record<string, string> = {};
    const query: [string, string][] = [];
    for (const parameter of operation.parameters) {
      if (parameter.in === 'path') pathValues[parameter.name] = encodeURIComponent(String(conformingValue(parameter.schema, context, parameter.name)));
      else if (parameter.in === 'query' && (parameter.required || random.chance(0.5))) query.push([parameter.name, encodeURIComponent(String(conformingValue(parameter.schema, context, parameter.name)))]);
    }
    let body: unknown = operation.body ? conformingValue(operation.body.schema, context) : undefined;
    let label: string = kind;
    let rawBody: string | undefined;
    let contentType = operation.body?.contentType;
    const headers: Record<string, string> = {};

    switch (kind) {
      case 'body-field': {
        const slots = slotsOf(operation.body!.schema, body, this.#document);
        if (!slots.length) {
          const broken = violatingValue(operation.body!.schema, context);
          body = broken.value;
          label = `body: ${broken.label}`;
          break;
        }
        const slot = random.pick(slots);
        const broken = violatingValue(slot.schema, context, String(slot.path.at(-1)));
        body = withSlot(body, slot.path, broken.value);
        label = `body.${slot.path.join('.')}: ${broken.label}`;
        break;
      }
      case 'body-missing': {
        const required = slotsOf(operation.body!.schema, body, this.#document).filter((slot) => slot.required && typeof slot.path.at(-1) === 'string');
        if (required.length) {
          const slot = random.pick(required);
          body = withSlot(body, slot.path, undefined, true);
          label = `body.${slot.path.join('.')}: missing`;
        } else {
          body = undefined;
          label = 'no body at all';
        }
        break;
      }
      case 'body-whole': {
        const choice = random.int(0, 7);
        const wholes: [unknown, string][] = [
          [[], 'an empty array'],
          [[body, body], 'an array of valid bodies'],
          ['text', 'a string'],
          [0, 'a number'],
          [null, 'null'],
          [true, 'true'],
          [{}, 'an empty object'],
          [JSON.parse('['.repeat(60) + ']'.repeat(60)), '60 nested arrays'],
        ];
        [body, label] = wholes[choice]!;
        label = `whole body: ${label}`;
        break;
      }
      case 'body-text': {
        const text = operation.body!.contentType.includes('json') ? JSON.stringify(body) : formEncode(body);
        const texts: [string, string][] = [
          [text.slice(0, Math.max(1, Math.floor(text.length / 2))), 'cut in half'],
          [`${text.replace(/}$/, ',}')}`, 'trailing comma'],
          [text.replace(/"/g, "'"), 'single quotes'],
          [`\ufeff${text}`, 'byte order mark'],
          [`${text}${text}`, 'two bodies in a row'],
          ['', 'empty text'],
          [text.replace(/:(\d+)/, ':1e999'), 'a number literal past double range'],
          [text.replace(/:(\d+)/, ':123456789012345678901234567890'), 'a 30-digit number literal'],
          [text.replace(/:(\d+)/, ':NaN'), 'NaN literal'],
          [text.replace(/:"/, ':"\\ud800'), 'escaped lone surrogate'],
          [text.replace(/:"/, ':"\\u0000'), 'escaped NUL'],
          [Buffer.from([0xff, 0xfe, 0xc3, 0x28]).toString('latin1'), 'bytes that are not UTF-8'],
          [`{"a": ${'1'.repeat(10_000)}}`, 'a 10,000-digit number'],
        ];
        [rawBody, label] = random.pick(texts);
        label = `body text: ${label}`;
        break;
      }
      case 'content-type': {
        contentType = random.pick(WRONG_CONTENT_TYPES);
        label = `Content-Type ${JSON.stringify(contentType)} for ${operation.body!.contentType}`;
        if (random.chance(0.5) && operation.body!.contentType.includes('json')) rawBody = formEncode(body);
        break;
      }
      case 'unexpected-body': {
        body = violatingValue({}, context).value;
        contentType = random.pick(['application/json', 'text/plain', 'application/x-www-form-urlencoded']);
        label = `a body where none is taken (${contentType})`;
        break;
      }
      case 'query': {
        const declared = operation.parameters.filter((parameter) => parameter.in === 'query');
        const name = declared.length && random.chance(0.85) ? random.pick(declared).name : `extra_${random.int(0, 9)}`;
        const value = random.pick(HOSTILE_QUERY_VALUES);
        const at = query.findIndex(([existing]) => existing === name);
        if (random.chance(0.2)) {
          query.push([name, value], [name, value]);
          label = `query ${name} given twice (${value.slice(0, 40)})`;
        } else {
          if (at >= 0) query.splice(at, 1);
          query.push([name, value]);
          label = `query ${name}=${value.slice(0, 40)}`;
        }
        break;
      }
      case 'path': {
        const names = operation.parameters.filter((parameter) => parameter.in === 'path').map((parameter) => parameter.name);
        const name = random.pick(names);
        const other = this.#ids(random.pick(['project_uuid', 'media_item_id', 'media_file_id', 'group_id', 'edit_uuid', 'draft_uuid', 'canvas_uuid']));
        const value = random.chance(0.2) ? (other ?? seededUuid(random)) : random.chance(0.2) ? seededUuid(random) : random.pick(HOSTILE_SEGMENTS);
        pathValues[name] = value;
        label = `path ${name}=${value.slice(0, 40)}`;
        break;
      }
      case 'language':
        headers['Accept-Language'] = random.pick(LANGUAGES);
        label = `Accept-Language ${JSON.stringify(headers['Accept-Language']).slice(0, 40)}`;
        break;
      case 'valid':
      case 'edges':
        break; // the conforming request made above, as it is
    }

    if (rawBody === undefined && body !== undefined) rawBody = contentType?.includes('form') ? formEncode(body) : JSON.stringify(body);
    if (rawBody !== undefined && contentType) headers['Content-Type'] = contentType;
    const request: FuzzRequest = { method: operation.method, path: addressOf(operation, pathValues, query), headers };
    if (rawBody !== undefined && operation.method !== 'GET') request.body = rawBody;
    return { operation, label, request };
  }
}

/** Sends a case as the actor; an event stream is closed as soon as its status is known. */
export async function send(actor: Actor, request: FuzzRequest, extraHeaders: Record<string, string> = {}): Promise<Outcome> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 30_000);
  try {
    const response = await actor.fetch(request.path, {
      method: request.method,
      headers: { ...request.headers, ...extraHeaders },
      signal: controller.signal,
      ...(request.body !== undefined ? { body: request.body } : {}),
    });
    const contentType = response.headers.get('content-type') ?? '';
    if (contentType.startsWith('text/event-stream')) {
      controller.abort();
      return { status: response.status, contentType, text: '' };
    }
    return { status: response.status, contentType, text: await response.text() };
  } finally {
    clearTimeout(timer);
  }
}

/** A case as a command line that replays it (cookies left out). */
export function describeCase(fuzzCase: FuzzCase, outcome: Outcome): string {
  const { request } = fuzzCase;
  const body = request.body === undefined ? '' : ` body ${JSON.stringify(request.body.length > 300 ? `${request.body.slice(0, 300)}… (${request.body.length} chars)` : request.body)}`;
  const headers = Object.keys(request.headers).length ? ` headers ${JSON.stringify(request.headers)}` : '';
  return `${outcome.status} ← ${request.method} ${request.path.length > 300 ? `${request.path.slice(0, 300)}…` : request.path}${headers}${body}  [${fuzzCase.operation.name}: ${fuzzCase.label}]  ${outcome.text.slice(0, 200)}`;
}
