/**
 * Every outcome event the campaign's processes publish, heard on Redis directly by the
 * campaign's own process (never killed): the user channels (media_ready, media_failed)
 * and the project channels (analysis_*, export_*), as api/src/events/bus.ts names them.
 */
import { Redis } from 'ioredis';

/** The events that say how a job ended; progress and start events are not counted. */
export const OUTCOME_EVENTS = ['media_ready', 'media_failed', 'analysis_complete', 'analysis_failed', 'export_complete', 'export_failed'] as const;
export type OutcomeEventType = (typeof OUTCOME_EVENTS)[number];

export interface HeardEvent {
  /** The user or project the channel belongs to. */
  owner: string;
  type: OutcomeEventType;
  data: Record<string, unknown>;
}

export interface OutcomeEventLog {
  readonly events: readonly HeardEvent[];
  close(): Promise<void>;
}

export async function listenToOutcomes(redisUrl: string, prefix: string): Promise<OutcomeEventLog> {
  const redis = new Redis(redisUrl, { lazyConnect: true });
  await redis.connect();
  const events: HeardEvent[] = [];
  redis.on('pmessage', (_pattern: string, channel: string, message: string) => {
    const owner = channel.slice(channel.lastIndexOf(':') + 1);
    const event = JSON.parse(message) as { type: string; data: Record<string, unknown> };
    if ((OUTCOME_EVENTS as readonly string[]).includes(event.type)) events.push({ owner, type: event.type as OutcomeEventType, data: event.data });
  });
  await redis.psubscribe(`${prefix}user:*`, `${prefix}project:*`);
  return {
    events,
    close: async () => {
      redis.disconnect();
    },
  };
}
