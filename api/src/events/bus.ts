import type { Redis } from 'ioredis';

/** Media events of one user, as the user stream sends them. */
export type UserEvent =
  | { type: 'media_ready'; data: { media_file_uuid: string; media_item_uuid: string; display_name: string | null; proxy_status: string } }
  | { type: 'media_failed'; data: { media_file_uuid: string; media_item_uuid: string; display_name: string | null; error: string } };

/**
 * Publishes events on Redis pub/sub so every api replica's streams see them.
 * ioredis's keyPrefix does not apply to channels, hence the explicit prefix.
 */
export class EventBus {
  readonly #redis: Redis;
  readonly #prefix: string;

  constructor(redis: Redis, prefix: string) {
    this.#redis = redis;
    this.#prefix = prefix;
  }

  userChannel(userId: string): string {
    return `${this.#prefix}user:${userId}`;
  }

  projectChannel(projectId: string): string {
    return `${this.#prefix}project:${projectId}`;
  }

  async publishToUser(userId: string, event: UserEvent): Promise<void> {
    await this.#redis.publish(this.userChannel(userId), JSON.stringify(event));
  }
}
