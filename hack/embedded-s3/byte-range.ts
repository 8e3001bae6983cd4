/** An inclusive span of bytes of one object. */
export interface ByteSpan {
  start: number;
  end: number;
}

/**
 * How S3 reads a `Range` header against an object of `size` bytes (RFC 9110 §14):
 * a span to answer with 206, 'unsatisfiable' for 416 InvalidRange, or null when the
 * header is to be ignored and the whole object sent (other units, several ranges,
 * a malformed or reversed range).
 */
export function resolveByteRange(header: string, size: number): ByteSpan | 'unsatisfiable' | null {
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match) return null;
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return null;
  if (first === '') {
    // Suffix range: the last N bytes, or all of them when N exceeds the size.
    const length = Number(last);
    if (length === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - length), end: size - 1 };
  }
  const start = Number(first);
  if (last !== '' && Number(last) < start) return null;
  if (start >= size) return 'unsatisfiable';
  return { start, end: last === '' ? size - 1 : Math.min(Number(last), size - 1) };
}
