import { parse as parseRejectingProto } from '@hapi/bourne';
import { InvalidInput } from '../shared/errors.ts';

/**
 * Deepest nesting of arrays and objects a JSON body may have. The deepest body the API
 * takes is a few levels; the bound keeps every later walk (validation, the text checks)
 * shallow, whatever arrives.
 */
export const MAX_JSON_DEPTH = 64;

// co-body's strict mode, kept: a JSON body is an object or an array.
const STARTS_AS_OBJECT_OR_ARRAY = /^[ \t\n\r]*[[{]/;

/**
 * A JSON request body as a value: 400 when it is not JSON, is not an object or array, or
 * nests deeper than MAX_JSON_DEPTH. Depth is measured on the text, before JSON.parse, so
 * `[[[[…` costs one linear scan and no parse.
 */
export function parseJsonBody(text: string): unknown {
  if (text === '') return {};
  if (!STARTS_AS_OBJECT_OR_ARRAY.test(text)) throw InvalidInput('request.malformed_json');
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) throw InvalidInput('request.json_too_deep', { params: { max_depth: MAX_JSON_DEPTH } });
  try {
    // Bourne refuses a `__proto__` key, as co-body did before: assigning one would swap a prototype.
    return parseRejectingProto(text, { protoAction: 'error' });
  } catch (error) {
    throw InvalidInput('request.malformed_json', { cause: error });
  }
}

/** Whether brackets outside strings open more than `max` levels at some point. */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === 0x5c) i++; // a backslash escapes the next character, quotes included
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) {
      inString = true;
    } else if (code === 0x5b || code === 0x7b) {
      if (++depth > max) return true;
    } else if (code === 0x5d || code === 0x7d) {
      depth--;
    }
  }
  return false;
}
