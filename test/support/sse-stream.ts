import type { Client } from './users.ts';

/** An SSE frame (comments included), as the server wrote it between blank lines. */
export type Frame = string;

export const isEvent = (name: string) => (frame: Frame) => frame.startsWith(`event: ${name}\n`);
export const isAnyEvent = (frame: Frame) => frame.startsWith('event: ');
export const dataOf = (frame: Frame) => JSON.parse(frame.split('\n').find((line) => line.startsWith('data: '))!.slice(6));

/** An open SSE response of `path`, read frame by frame in order of arrival. */
export async function openSse(client: Client, path: string) {
  const controller = new AbortController();
  const response = await client.get(path, { signal: controller.signal });
  const frames: Frame[] = [];
  let buffer = '';
  const reader = response.body ? response.body.pipeThrough(new TextDecoderStream()).getReader() : undefined;
  let pending: ReturnType<NonNullable<typeof reader>['read']> | undefined;

  /** Reads one more chunk into `frames`; false once the server ended the body. */
  async function read(deadline: number, waitingFor: string): Promise<boolean> {
    if (!reader) throw new Error('no body');
    // A body the server ended without its last chunk (its end is never complete) rejects: an end all the same.
    pending ??= reader.read().catch(() => ({ done: true as const, value: undefined }));
    const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), Math.max(0, deadline - Date.now())).unref());
    const result = await Promise.race([pending, timeout]);
    if (result === 'timeout') throw new Error(`${waitingFor}: nothing within the time; saw ${JSON.stringify(frames)}`);
    pending = undefined;
    if (result.done) return false;
    buffer += result.value;
    let cut: number;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      frames.push(buffer.slice(0, cut));
      buffer = buffer.slice(cut + 2);
    }
    return true;
  }

  /** Waits for the first frame that matches; returns it and the frames that came before it (all taken off `frames`). */
  async function until(match: (frame: Frame) => boolean, timeoutMs = 20_000): Promise<{ frame: Frame; before: Frame[] }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = frames.findIndex(match);
      if (index >= 0) {
        const before = frames.splice(0, index + 1);
        return { frame: before.pop()!, before };
      }
      if (!(await read(deadline, 'waiting for a frame'))) throw new Error(`stream ended; saw ${JSON.stringify(frames)}`);
    }
  }

  return {
    response,
    frames,
    until,
    /** The first matching frame (frames before it are dropped). */
    next: async (match: (frame: Frame) => boolean, timeoutMs?: number) => (await until(match, timeoutMs)).frame,
    /** The first frame the server sent. */
    first: async (timeoutMs?: number) => (await until(() => true, timeoutMs)).frame,
    /** Resolves once the server ends the body; fails after timeoutMs. */
    async ended(timeoutMs: number): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (await read(deadline, 'waiting for the end')) frames.splice(0);
    },
    close: () => controller.abort(),
  };
}

export type SseStream = Awaited<ReturnType<typeof openSse>>;

/**
 * Two keepalive comments in a row, the second no sooner than `seconds` after the first
 * (a lower bound only: a loaded machine may deliver them late, never early).
 */
export async function expectKeepalives(stream: SseStream, seconds: number): Promise<void> {
  await stream.next((frame) => frame === ': keepalive', (seconds + 2) * 1000);
  const first = Date.now();
  await stream.next((frame) => frame === ': keepalive', (seconds + 2) * 1000);
  const gap = Date.now() - first;
  if (gap < seconds * 1000 - 100) throw new Error(`keepalives ${gap} ms apart, expected about ${seconds * 1000} ms`);
}
