/**
 * Values derived from an operation's schemas: one that conforms (so a case can break
 * exactly one thing and reach the check behind it), edge values that still conform
 * (so the handler runs on them), and values that violate the schema field by field.
 */
import { resolve, type JsonSchema, type OpenApiDocument } from './operations.ts';
import type { Seeded } from './random.ts';

/** Ids to put in fields and parameters named like a fixture (`media_item_id` → the owner's item). */
export type IdLookup = (name: string) => string | undefined;

export interface ValueContext {
  document: OpenApiDocument;
  random: Seeded;
  ids: IdLookup;
  /** Conforming values at the edges of their ranges rather than in the middle. */
  edges?: boolean;
}

const INT32_MAX = 2 ** 31 - 1;

/** A random v4-shaped uuid from the seeded generator (so cases replay). */
export function seededUuid(random: Seeded): string {
  const hex = Array.from({ length: 32 }, () => random.int(0, 15).toString(16));
  hex[12] = '4';
  hex[16] = (8 + random.int(0, 3)).toString(16);
  const text = hex.join('');
  return `${text.slice(0, 8)}-${text.slice(8, 12)}-${text.slice(12, 16)}-${text.slice(16, 20)}-${text.slice(20)}`;
}

/** The non-null types a schema allows (`["integer","null"]` → integer), `object` when it lists properties. */
export function typesOf(schema: JsonSchema): string[] {
  if (Array.isArray(schema.type)) return schema.type;
  if (schema.type) return [schema.type];
  if (schema.properties) return ['object'];
  if (schema.enum) return [...new Set(schema.enum.map((value) => (value === null ? 'null' : typeof value)))];
  return [];
}

/** Strings that satisfy the patterns route schemas use (colours, usernames, language codes); the first that matches wins. */
const PATTERN_SAMPLES = ['#a1b2c3', '#fff', 'en', 'fuzz_user.1', 'abc', 'a', '1'];
const UNICODE_PIECES = ['é', '🎬', 'e\u0301', '\u202eltr', '\u200b', '字幕', 'ß', '\u{1f468}\u200d\u{1f469}\u200d\u{1f467}', 'Ω', ' '];

/** A value that conforms to `schema`. */
export function conformingValue(schema: JsonSchema, context: ValueContext, name = ''): unknown {
  const { random } = context;
  const resolved = resolve(context.document, schema);
  if (resolved.const !== undefined) return resolved.const;
  if (resolved.enum) return random.pick(resolved.enum.filter((value) => value !== null).length ? resolved.enum.filter((value) => value !== null) : resolved.enum);
  const branches = resolved.oneOf ?? resolved.anyOf;
  if (branches) return conformingValue(random.pick(branches), context, name);
  if (resolved.allOf) return conformingValue(resolved.allOf[0]!, context, name);
  const types = typesOf(resolved).filter((type) => type !== 'null');
  const type = types.length ? random.pick(types) : typesOf(resolved).includes('null') ? 'null' : 'string';
  switch (type) {
    case 'object':
      return conformingObject(resolved, context);
    case 'array': {
      const min = resolved.minItems ?? 0;
      const max = Math.min(resolved.maxItems ?? min + 2, min + 2);
      const count = context.edges && random.chance(0.3) ? Math.min(resolved.maxItems ?? 50, 50) : random.int(min, Math.max(min, max));
      return Array.from({ length: count }, () => conformingValue(resolved.items ?? {}, context, name));
    }
    case 'integer':
    case 'number':
      return conformingNumber(resolved, type === 'integer', context);
    case 'boolean':
      return random.chance(0.5);
    case 'null':
      return null;
    default:
      return conformingString(resolved, context, name);
  }
}

/**
 * An object with every required property and some optional ones. Numbers rise in
 * property order (start_ms before end_ms), so pairs the schema cannot express still hold.
 */
function conformingObject(schema: JsonSchema, context: ValueContext): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  const required = new Set(schema.required ?? []);
  let floor = 0;
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    if (!required.has(name) && !context.random.chance(0.6)) continue;
    let value = conformingValue(property, context, name);
    if (typeof value === 'number' && !context.edges) {
      const rising = value;
      const bounds = numberBounds(resolve(context.document, property), Number.isInteger(rising));
      value = rising < floor && floor <= bounds.max ? Math.min(bounds.max, floor + context.random.int(0, 1000)) : rising;
      floor = (value as number) + 1;
    }
    result[name] = value;
  }
  return result;
}

function numberBounds(schema: JsonSchema, integer: boolean): { min: number; max: number } {
  const step = integer ? 1 : 0.001;
  const min = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + step : undefined);
  const max = schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - step : undefined);
  return { min: min ?? (integer ? -INT32_MAX : -1e9), max: max ?? (integer ? INT32_MAX : 1e9) };
}

function conformingNumber(schema: JsonSchema, integer: boolean, context: ValueContext): number {
  const { random } = context;
  const declared = { min: schema.minimum ?? schema.exclusiveMinimum, max: schema.maximum ?? schema.exclusiveMaximum };
  const { min, max } = numberBounds(schema, integer);
  if (context.edges) {
    // The edges of the declared range, and for an open end the largest values zod lets through.
    const candidates = [min, max, declared.min === undefined ? Number.MIN_SAFE_INTEGER : min, declared.max === undefined ? Number.MAX_SAFE_INTEGER : max];
    if (declared.max === undefined) candidates.push(2 ** 31, 2 ** 32, 1e15);
    if (!integer) candidates.push(min + 1e-9 > max ? min : min + 1e-9, declared.max === undefined ? 1e300 : max);
    const value = random.pick(candidates);
    return integer ? Math.trunc(value) : value;
  }
  const low = declared.min !== undefined ? min : 0;
  const high = declared.max !== undefined ? max : low + 10_000;
  const value = low + random.next() * (Math.max(low, high) - low);
  return integer ? Math.min(max, Math.max(min, Math.round(value))) : Math.min(max, Math.max(min, value));
}

function conformingString(schema: JsonSchema, context: ValueContext, name: string): string {
  const { random } = context;
  switch (schema.format) {
    case 'uuid':
      return context.ids(name) ?? seededUuid(random);
    case 'date-time':
      return new Date(Date.UTC(2026, random.int(0, 11), random.int(1, 28), random.int(0, 23))).toISOString();
    case 'uri':
      return `https://example.test/${random.int(0, 99999)}`;
    case 'email':
      return `fuzz${random.int(0, 1e9)}@example.test`;
    case undefined:
      break;
  }
  if (schema.pattern) {
    const pattern = new RegExp(schema.pattern, 'u');
    const sample = PATTERN_SAMPLES.find((candidate) => pattern.test(candidate));
    if (sample) return sample;
  }
  if (name.includes('email')) return `fuzz${random.int(0, 1e9)}@example.test`;
  const min = schema.minLength ?? 0;
  const max = schema.maxLength ?? Math.max(min, 64);
  if (context.edges) {
    // As long as allowed, in characters that are each one UTF-16 unit, or in astral ones that count twice.
    const piece = random.pick(UNICODE_PIECES);
    const length = random.pick([min, max, Math.min(max, 10_000)]);
    let text = '';
    while (text.length + piece.length <= length) text += piece;
    while (text.length < Math.max(min, 1) && text.length < max) text += 'x';
    return text.trim().length >= min ? text : 'x'.repeat(Math.max(min, 1));
  }
  const length = random.int(Math.max(min, 1), Math.max(Math.max(min, 1), Math.min(max, min + 12)));
  return Array.from({ length }, () => String.fromCharCode(97 + random.int(0, 25))).join('').slice(0, max);
}

/** A value that breaks `schema` (or sits on an edge it may not expect), with a label saying how. */
export function violatingValue(schema: JsonSchema, context: ValueContext, name = ''): { value: unknown; label: string } {
  const { random } = context;
  const resolved = resolve(context.document, schema);
  const types = typesOf(resolved);
  const options: { value: () => unknown; label: string }[] = [
    { value: () => null, label: 'null' },
    { value: () => [conformingValue(resolved, context, name)], label: 'array around a valid value' },
    { value: () => ({ value: conformingValue(resolved, context, name) }), label: 'object around a valid value' },
    { value: () => 'fuzz', label: 'a string' },
    { value: () => random.pick([0, -1, 1.5, -(2 ** 31) - 1, 2 ** 63, 1e308]), label: 'a number' },
    { value: () => random.chance(0.5), label: 'a boolean' },
  ];
  const members = resolved.enum;
  if (members) options.push({ value: () => `${String(random.pick(members))}_NOT`, label: 'not one of the enum' }, { value: () => String(random.pick(members)).toUpperCase() + ' ', label: 'enum value, case and space changed' });
  if (types.includes('string')) {
    const max = resolved.maxLength ?? 1000;
    options.push(
      { value: () => 'x'.repeat(max + 1), label: 'one character over maxLength' },
      { value: () => '🎬'.repeat(Math.ceil((max + 1) / 2)), label: 'astral characters past maxLength' },
      { value: () => 'y'.repeat(200_000), label: 'a 200 KB string' },
      { value: () => '', label: 'empty string' },
      { value: () => '   ', label: 'only spaces' },
      { value: () => `a\u0000b`, label: 'NUL inside' },
      { value: () => `a\ud800b`, label: 'lone surrogate' },
      { value: () => random.pick(UNICODE_PIECES).repeat(random.int(1, 40)), label: 'unicode' },
      { value: () => random.pick(["'; drop table projects; --", '../../etc/passwd', '<script>alert(1)</script>', '%00', '${7*7}', '\\', '\r\nX-Injected: 1']), label: 'injection-shaped text' },
    );
    if (resolved.format === 'uuid') {
      options.push(
        { value: () => random.pick(['not-a-uuid', '00000000-0000-0000-0000-000000000000', seededUuid(random).toUpperCase(), `{${seededUuid(random)}}`, seededUuid(random).replace(/-/g, ''), `${seededUuid(random)}x`, '1']), label: 'not a uuid (or the nil one)' },
        { value: () => seededUuid(random), label: 'a uuid nobody owns' },
        { value: () => context.ids(random.pick(['project_uuid', 'media_item_id', 'media_file_id', 'group_id', 'edit_uuid', 'draft_uuid', 'run_uuid'])) ?? seededUuid(random), label: "another kind's id" },
      );
    }
    if (resolved.format === 'date-time') options.push({ value: () => random.pick(['2026-13-45T99:99:99Z', 'yesterday', '0000-00-00T00:00:00Z', '+275760-09-13T00:00:00.001Z']), label: 'not a date-time' });
  }
  if (types.includes('integer') || types.includes('number')) {
    const { min, max } = numberBounds(resolved, types.includes('integer'));
    options.push(
      { value: () => min - 1, label: 'minimum - 1' },
      { value: () => max + 1, label: 'maximum + 1' },
      { value: () => random.pick([2 ** 31, -(2 ** 31) - 1, 2 ** 53 + 2, -(2 ** 53) - 2, 1e308, -1e308, 5e-324, -0]), label: 'huge, tiny or -0' },
      { value: () => random.pick([0.5, 1.5, min + 0.5]), label: 'a fraction' },
      { value: () => String(random.pick([1, 0, -1, 2 ** 40])), label: 'a number as a string' },
    );
  }
  if (types.includes('array')) {
    const item = resolved.items ?? {};
    options.push(
      { value: () => Array.from({ length: (resolved.maxItems ?? 100) + 1 }, () => conformingValue(item, context, name)), label: 'one item over maxItems' },
      { value: () => Array.from({ length: 20_000 }, (_, index) => index), label: 'a 20,000-number array' },
      { value: () => [null, [], {}], label: 'items of every wrong type' },
      { value: () => [violatingValue(item, context, name).value], label: 'one violating item' },
    );
  }
  if (types.includes('object')) {
    options.push(
      { value: () => ({}), label: 'empty object' },
      { value: () => ({ ...conformingObject(resolved, context), ['extra_' + random.int(0, 99)]: 1 }), label: 'an extra field' },
      { value: () => Object.fromEntries(Array.from({ length: 2000 }, (_, index) => [`k${index}`, index])), label: '2,000 keys' },
    );
  }
  const chosen = random.pick(options);
  return { value: chosen.value(), label: chosen.label };
}

/** Every place a value sits inside a conforming value, with the schema that describes it. */
export interface Slot {
  path: (string | number)[];
  schema: JsonSchema;
  required: boolean;
}

export function slotsOf(schema: JsonSchema, value: unknown, document: OpenApiDocument, path: (string | number)[] = []): Slot[] {
  const resolved = resolve(document, schema);
  const branches = resolved.oneOf ?? resolved.anyOf;
  const slots: Slot[] = [];
  if (branches && value && typeof value === 'object' && !Array.isArray(value)) {
    // The branch whose properties the value was built from.
    const keys = Object.keys(value);
    const branch = branches.map((candidate) => resolve(document, candidate)).find((candidate) => keys.every((key) => key in (candidate.properties ?? {})));
    return branch ? slotsOf(branch, value, document, path) : slots;
  }
  if (value && typeof value === 'object' && !Array.isArray(value) && resolved.properties) {
    const required = new Set(resolved.required ?? []);
    for (const [name, property] of Object.entries(resolved.properties)) {
      slots.push({ path: [...path, name], schema: property, required: required.has(name) });
      if (name in value) slots.push(...slotsOf(property, (value as Record<string, unknown>)[name], document, [...path, name]));
    }
  } else if (Array.isArray(value) && resolved.items) {
    value.forEach((item, index) => slots.push({ path: [...path, index], schema: resolved.items!, required: true }, ...slotsOf(resolved.items!, item, document, [...path, index])));
  }
  return slots;
}

/** A copy of `value` with the slot at `path` set (or, with `remove`, taken out). */
export function withSlot(value: unknown, path: (string | number)[], replacement: unknown, remove = false): unknown {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path;
  if (Array.isArray(value)) {
    const copy = [...value];
    if (rest.length === 0 && remove) copy.splice(head as number, 1);
    else copy[head as number] = withSlot(copy[head as number] ?? {}, rest, replacement, remove);
    return copy;
  }
  const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  if (rest.length === 0 && remove) delete copy[String(head)];
  else copy[String(head)] = withSlot(copy[String(head)] ?? {}, rest, replacement, remove);
  return copy;
}
