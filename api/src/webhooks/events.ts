import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { BillingChange } from '../billing/billing-service.ts';
import type { OutcomeEvent } from '../events/bus.ts';
import { webhookOf, type UserEvent } from '../events/catalog.ts';
import type { Clock } from '../shared/clock.ts';
import { webhookEventData, type WebhookEvent } from './payloads.ts';
import { newMessageId } from './signing.ts';

export interface WebhookEventsDeps {
  clock: Clock;
  logger: Logger;
}

/**
 * Records events for webhook delivery: one `webhook_deliveries` row per enabled endpoint of
 * the user that wants the event's type, written with the caller's EntityManager, so inside
 * the transaction that makes the change (a job's settlement, an analyze, a plan change):
 * the event is owed exactly when the change commits. The delivery worker sends them.
 */
export class WebhookEvents {
  readonly #d: WebhookEventsDeps;

  constructor(deps: WebhookEventsDeps) {
    this.#d = deps;
  }

  /** Records one event for the user's endpoints; returns how many deliveries it made. */
  async record(em: EntityManager, userId: string, event: WebhookEvent): Promise<number> {
    // an event that its schema refuses is a bug here: it is logged, never allowed to fail the change it reports
    const parsed = webhookEventData[event.type].safeParse(event.data);
    if (!parsed.success) {
      this.#d.logger.error({ type: event.type, issues: parsed.error.issues }, 'webhook event does not match its schema; not recorded');
      return 0;
    }
    const now = this.#d.clock.now();
    const payload = JSON.stringify({ type: event.type, timestamp: now.toISOString(), data: parsed.data });
    const rows = await em.execute<{ id: string }[]>(
      `insert into webhook_deliveries (id, endpoint_id, message_id, event_type, payload, status, attempts, schedule_step, next_attempt_at, created_at)
       select gen_random_uuid(), e.id, ?, ?, ?, 'pending', 0, 0, ?, ? from webhook_endpoints e
        where e.user_id = ? and e.enabled and ? = any(e.event_types)
       returning id`,
      [newMessageId(), event.type, payload, now, now, userId, event.type],
    );
    return rows.length;
  }

  /**
   * Stream events (a settled job's, or a change's through events/announcer.ts), recorded in the
   * caller's transaction as the catalog derives their webhooks (events/catalog.ts): for the
   * user an event goes to, or a project event's owner. An event whose catalog entry has no
   * webhook is not recorded, by its declared decision; a project deleted meanwhile has no owner to tell.
   */
  async recordOutcomes(em: EntityManager, outcomes: readonly OutcomeEvent[]): Promise<void> {
    for (const outcome of outcomes) {
      const addressed = outcome.to === 'user' ? await mediaOwner(em, outcome.userId, outcome.event) : await projectOwner(em, outcome.projectId);
      if (!addressed) continue;
      const webhook = webhookOf(outcome.event, { projectId: addressed.projectId });
      if (webhook) await this.record(em, addressed.userId, webhook as WebhookEvent);
    }
  }

  /** The billing listener (BillingService.useChangeListener): plan and ledger changes. */
  readonly billingChanged = async (em: EntityManager, userId: string, change: BillingChange): Promise<void> => {
    if (change.kind === 'subscription') {
      const { subscription } = change;
      await this.record(em, userId, {
        type: 'subscription.updated',
        data: {
          tier: subscription.tier,
          subscription_status: subscription.status,
          billing_interval: subscription.billingInterval ?? null,
          current_period_end: subscription.currentPeriodEnd?.toISOString() ?? null,
          trial_ends_at: subscription.trialEndsAt?.toISOString() ?? null,
        },
      });
      return;
    }
    const { credits } = change;
    await this.record(em, userId, {
      type: 'credits.updated',
      data: { change: change.entry, minutes: change.minutes, balance: credits.balance, reserved: credits.reserved, available: credits.available },
    });
  };
}

interface Addressed {
  userId: string;
  projectId: string | null;
}

/** A user-stream event (every one names its media item) goes to that user, about the item's project (null in the library). */
async function mediaOwner(em: EntityManager, userId: string, event: UserEvent): Promise<Addressed> {
  const [item] = await em.execute<{ scope_project_id: string | null }[]>(`select scope_project_id from media_items where id = ?`, [event.data.media_item_uuid]);
  return { userId, projectId: item?.scope_project_id ?? null };
}

/** A project event goes to the project's owner; none once the project is gone. */
async function projectOwner(em: EntityManager, projectId: string): Promise<Addressed | undefined> {
  const [project] = await em.execute<{ user_id: string }[]>(`select user_id from projects where id = ?`, [projectId]);
  return project ? { userId: project.user_id, projectId } : undefined;
}
