// The api's two SSE streams (the session cookie authenticates them; event names are lowercase,
// data is JSON) and the spec's fallback: polling every 3 s while media is processing and the
// stream is not connected.

/** MEDIA_POLL_MS: the spec's "every 3 seconds while any media item is pending or processing". */
export const MEDIA_POLL_MS = 3000;

export type Listener = (event: string, data: Record<string, unknown>) => void;

/** Opens an EventSource and hands every named event to `listener`; returns a closer. */
export function openStream(path: string, events: readonly string[], listener: Listener, onState?: (open: boolean) => void): { close(): void; isOpen(): boolean } {
  const source = new EventSource(path, { withCredentials: true });
  for (const name of events) {
    source.addEventListener(name, (event) => {
      let data: Record<string, unknown> = {};
      try {
        data = JSON.parse((event as MessageEvent<string>).data) as Record<string, unknown>;
      } catch {
        // a frame that is not JSON carries nothing the studio reads
      }
      listener(name, data);
    });
  }
  source.onopen = () => onState?.(true);
  source.onerror = () => onState?.(false);
  return { close: () => source.close(), isOpen: () => source.readyState === EventSource.OPEN };
}

export const USER_EVENTS = ['media_ready', 'media_failed'] as const;
export const PROJECT_EVENTS = [
  'analysis_started',
  'analysis_progress',
  'analysis_complete',
  'analysis_failed',
  'export_started',
  'export_progress',
  'export_complete',
  'export_failed',
] as const;
