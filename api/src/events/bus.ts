import type { ChainableCommander, Redis } from 'ioredis';
import type { ProjectEvent, ProjectEventType, SnapshotRule, UserEvent } from './catalog.ts';

export type { ProjectEvent, SnapshotRule, UserEvent } from './catalog.ts';

export const progressSnapshotKey = (projectId: string) => `progress-snapshot:${projectId}`;

/**
 * An event owed to a user's or a project's stream: a settled job's (saved with the settlement in
 * jobs.outcome_events, published after it) or a change's (events/announcer.ts). Either way its
 * webhook is recorded in the same transaction and it is published once.
 */
export type OutcomeEvent = { to: 'user'; userId: string; event: UserEvent } | { to: 'project'; projectId: string; event: ProjectEvent };

/** How long a published outcome's marker is kept: far longer than any redelivery of the same settlement. */
const OUTCOME_MARKER_SECONDS = 24 * 3600;

const PUBLISH_ONCE = `
if not redis.call('SET', KEYS[1], '1', 'NX', 'EX', tonumber(ARGV[3])) then return 0 end
if ARGV[4] == '1' then redis.call('DEL', KEYS[2]) end
redis.call('PUBLISH', ARGV[1], ARGV[2])
return 1
`;

/**
 * Publishes events on Redis pub/sub so every api replica's streams see them.
 * ioredis's keyPrefix does not apply to channels, hence the explicit prefix.
 */
export class EventBus {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #snapshot: SnapshotRule | undefined;
  readonly #clearsSnapshot: ReadonlySet<ProjectEventType>;

  constructor(redis: Redis, prefix: string, snapshot?: SnapshotRule) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#snapshot = snapshot;
    this.#clearsSnapshot = new Set(snapshot?.clearedBy ?? []);
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

  /**
   * Publishes on the project's channel, keeping or clearing its progress snapshot in the
   * same MULTI: a stream that reads the snapshot after subscribing sees either both the
   * snapshot and the message or neither.
   */
  async publishToProject(projectId: string, event: ProjectEvent): Promise<void> {
    const message = JSON.stringify(event);
    const channel = this.projectChannel(projectId);
    const key = progressSnapshotKey(projectId);
    if (this.#snapshot && event.type === this.#snapshot.kept) await exec(this.#redis.multi().set(key, message, 'EX', this.#snapshot.seconds).publish(channel, message));
    else if (this.#clearsSnapshot.has(event.type)) await exec(this.#redis.multi().del(key).publish(channel, message));
    else await this.#redis.publish(channel, message);
  }

  /**
   * Publishes a job's outcome event unless it went out before: a marker `outcome:<key>`
   * (kept a day) is set with the publish in one script, so a completion that retries, or a
   * process that publishes what a killed one saved, never sends it twice.
   */
  async publishOnce(key: string, outcome: OutcomeEvent): Promise<boolean> {
    const message = JSON.stringify(outcome.event);
    const channel = outcome.to === 'user' ? this.userChannel(outcome.userId) : this.projectChannel(outcome.projectId);
    const clearSnapshot = outcome.to === 'project' && this.#clearsSnapshot.has(outcome.event.type) ? progressSnapshotKey(outcome.projectId) : '';
    const sent = await this.#redis.eval(PUBLISH_ONCE, 2, `outcome:${key}`, clearSnapshot || `outcome:${key}:none`, channel, message, String(OUTCOME_MARKER_SECONDS), clearSnapshot ? '1' : '0');
    return sent === 1;
  }

  /** The project's kept snapshot message (analysis_progress), exactly as it was published, or null. */
  progressSnapshot(projectId: string): Promise<string | null> {
    return this.#redis.get(progressSnapshotKey(projectId));
  }
}

/** Runs a MULTI; its replies, or the first command's error. */
export async function exec(multi: ChainableCommander): Promise<unknown[]> {
  const replies = (await multi.exec()) ?? [];
  const failed = replies.find(([error]) => error);
  if (failed) throw failed[0];
  return replies.map(([, reply]) => reply);
}
