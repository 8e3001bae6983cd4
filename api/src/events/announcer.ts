import type { EntityManager } from '@mikro-orm/postgresql';
import type { EventBus, OutcomeEvent } from './bus.ts';

/** Records stream events' webhooks inside a transaction (webhooks/events.ts WebhookEvents; wired by the composition root). */
export interface WebhookRecorder {
  recordOutcomes(em: EntityManager, events: readonly OutcomeEvent[]): Promise<void>;
}

/**
 * The one way a change that is not a job's settlement sends an event (analysis_started,
 * export_started): its webhook is recorded in the change's transaction, so it is owed exactly
 * when the change commits, and the stream event is published after the commit under a marker
 * named by its type and `key` (the subject's id), so a retried publish (an after-commit retry, a repeated request) sends it once.
 * Settled jobs' events take the same two steps in JobCompletion, with the row as their outbox.
 */
export class Announcer {
  readonly #bus: Pick<EventBus, 'publishOnce'>;
  readonly #webhooks: WebhookRecorder | undefined;

  constructor(bus: Pick<EventBus, 'publishOnce'>, webhooks?: WebhookRecorder) {
    this.#bus = bus;
    this.#webhooks = webhooks;
  }

  /** Records the event's webhook in `em`'s transaction and answers the publish to run once it has committed. */
  async announce(em: EntityManager, key: string, event: OutcomeEvent): Promise<() => Promise<void>> {
    await this.#webhooks?.recordOutcomes(em, [event]);
    return async () => {
      await this.#bus.publishOnce(`announced:${event.event.type}:${key}`, event);
    };
  }
}
