import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { BillingChange } from '../billing/billing-service.ts';
import type { OutcomeEvent } from '../events/bus.ts';
import type { Clock } from '../shared/clock.ts';
import { payloadText, webhookEventData, type WebhookEvent } from './payloads.ts';
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

  /** A settled job's events (jobs/completion.ts), recorded in the settling transaction with the ids a client needs. */
  async recordOutcomes(em: EntityManager, outcomes: readonly OutcomeEvent[]): Promise<void> {
    for (const outcome of outcomes) {
      const translated = outcome.to === 'user' ? { userId: outcome.userId, event: await mediaEvent(em, outcome.event) } : await projectEvent(em, outcome.projectId, outcome.event);
      if (translated) await this.record(em, translated.userId, translated.event);
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

type Translated = { userId: string; event: WebhookEvent } | undefined;

/** media_ready / media_failed of the user stream, with the item's project (null in the library). */
async function mediaEvent(em: EntityManager, event: Extract<OutcomeEvent, { to: 'user' }>['event']): Promise<WebhookEvent> {
  const [item] = await em.execute<{ scope_project_id: string | null }[]>(`select scope_project_id from media_items where id = ?`, [event.data.media_item_uuid]);
  const ids = {
    media_item_uuid: event.data.media_item_uuid,
    media_file_uuid: event.data.media_file_uuid,
    project_uuid: item?.scope_project_id ?? null,
    display_name: event.data.display_name,
  };
  switch (event.type) {
    case 'media_ready':
      return { type: 'media.ready', data: { ...ids, proxy_status: event.data.proxy_status } };
    case 'media_failed':
      return { type: 'media.failed', data: { ...ids, error: payloadText(event.data.error) } };
  }
}

/** The analysis and export outcomes of the project stream, for the project's owner. */
async function projectEvent(em: EntityManager, projectId: string, event: { type: string; data: object }): Promise<Translated> {
  const [project] = await em.execute<{ user_id: string }[]>(`select user_id from projects where id = ?`, [projectId]);
  if (!project) return undefined;
  const data = event.data as Record<string, unknown>;
  const text = (value: unknown) => payloadText(String(value ?? ''));
  const userId = project.user_id;
  const run = { project_uuid: projectId, analysis_run_id: String(data.analysis_run_id) };
  const exported = { project_uuid: projectId, export_uuid: String(data.export_uuid) };
  switch (event.type) {
    case 'analysis_complete':
      return { userId, event: { type: 'analysis.completed', data: { ...run, edit_count: Number(data.edit_count) } } };
    case 'analysis_failed':
      return { userId, event: { type: 'analysis.failed', data: { ...run, error: text(data.error) } } };
    case 'export_complete':
      return { userId, event: { type: 'export.completed', data: exported } };
    case 'export_failed':
      return { userId, event: { type: 'export.failed', data: { ...exported, error: text(data.error) } } };
    default:
      return undefined;
  }
}
