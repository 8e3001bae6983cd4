import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { Mailer } from '../accounts/mailer.ts';
import { negotiateLocale, translate } from '../i18n/index.ts';
import type { Clock } from '../shared/clock.ts';
import { CoalescedPass } from '../shared/coalesced-pass.ts';
import { signedHeaders } from './signing.ts';
import { checkTargetUrl, guardedLookup, type Resolver } from './targets.ts';

/**
 * When a failed delivery is tried again, after each failed attempt in turn: 5 s, 5 min,
 * 30 min, 2 h, 5 h, 10 h, 14 h (eight attempts over about 31 hours), each ±10% jitter so
 * a receiver that comes back is not hit by every retry at once. Then the delivery is failed.
 */
export const RETRY_SCHEDULE_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 50_400_000] as const;
const JITTER = 0.1;
/** Longest error text kept in the delivery log. */
const ERROR_MAX = 500;

export interface WebhookDeliveryOptions {
  orm: MikroORM;
  clock: Clock;
  logger: Logger;
  mailer: Mailer;
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS. */
  allowPrivate: boolean;
  resolver: Resolver;
  /** A receiver must answer within this (WEBHOOK_TIMEOUT_MS). */
  timeoutMs: number;
  /** Deliveries in flight at once in this process (WEBHOOK_CONCURRENCY); one per endpoint at a time. */
  concurrency: number;
  /** How often due deliveries are looked for (WEBHOOK_POLL_MS); a recorded event also wakes the worker. */
  pollMs: number;
  /** An endpoint whose deliveries failed without a success for this long is disabled (WEBHOOK_DISABLE_AFTER_DAYS). */
  disableAfterMs: number;
  random?: () => number;
}

interface Claimed {
  id: string;
  message_id: string;
  payload: string;
  attempts: number;
  schedule_step: number;
  endpoint_id: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  lease_until: Date;
}

interface Attempt {
  ok: boolean;
  status: number | null;
  error: string | null;
  latencyMs: number;
}

/** What a close() aborts: such an attempt leaves its row leased, as a crash would, and another worker takes it after the lease. */
class Stopped extends Error {}

/**
 * Sends recorded deliveries, at least once. Due rows are claimed with `FOR UPDATE SKIP
 * LOCKED` and leased (timeout + 30 s), so several api replicas never send one row at once
 * and a worker that dies mid-attempt leaves the row to be claimed again when its lease
 * ends. One delivery per endpoint is in flight (across replicas through the lease, bar two claims in the same instant),
 * users take turns (the one with fewest deliveries in flight first, then oldest due), and each
 * request is bounded by the timeout, so slow receivers hold the slots of their own user and
 * another user's delivery waits at most one timeout for a slot. Redirects are not followed (3xx fails).
 */
export class WebhookDeliveryWorker {
  readonly #o: WebhookDeliveryOptions;
  readonly #inFlight = new Map<string, Promise<void>>();
  readonly #requests = new Set<http.ClientRequest>();
  readonly #lookup: ReturnType<typeof guardedLookup>;
  #timer: NodeJS.Timeout | undefined;
  readonly #pass: CoalescedPass;
  #closed = false;

  constructor(options: WebhookDeliveryOptions) {
    this.#o = options;
    this.#lookup = guardedLookup(options.allowPrivate, options.resolver);
    this.#pass = new CoalescedPass(() => this.#fill(), (error: unknown) => this.#o.logger.warn({ err: error }, 'webhook delivery pass failed; the next one retries'));
  }

  start(): void {
    this.#timer = setInterval(() => this.kick(), this.#o.pollMs);
    this.#timer.unref();
    this.kick();
  }

  /** Looks for due deliveries now (coalesced with a pass already running). */
  kick(): void {
    if (this.#closed) return;
    this.#pass.kick();
  }

  /** Resolves when no pass and no attempt is running (tests). */
  async idle(): Promise<void> {
    await this.#pass.idle();
    while (this.#inFlight.size > 0) {
      await Promise.all(this.#inFlight.values());
      await this.#pass.idle();
    }
  }

  /** Stops: attempts in flight are cut off and left leased (another process takes them after the lease). */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    for (const request of this.#requests) request.destroy(new Stopped('the worker stopped'));
    await this.idle();
  }

  get #leaseMs(): number {
    return this.#o.timeoutMs + 30_000;
  }

  async #fill(): Promise<void> {
    for (;;) {
      const free = this.#o.concurrency - this.#inFlight.size;
      if (free <= 0 || this.#closed) return;
      const claimed = await this.#claim(free);
      for (const row of claimed) {
        const attempt = this.#attempt(row).finally(() => {
          this.#inFlight.delete(row.id);
          this.kick();
        });
        this.#inFlight.set(row.id, attempt);
      }
      if (claimed.length < free) return;
    }
  }

  /**
   * Up to `limit` due deliveries, the oldest due of each endpoint with none in flight, leased
   * to this worker, shared fairly among users: each user's candidates take turns counted
   * from the deliveries that user already has in flight (on any replica), so a user whose
   * slow receivers fill every slot gets the next free slot only when no other user waits.
   */
  async #claim(limit: number): Promise<Claimed[]> {
    const now = this.#o.clock.now();
    const leaseUntil = new Date(now.getTime() + this.#leaseMs);
    return this.#o.orm.em.fork().transactional((em) =>
      em.execute<Claimed[]>(
        `update webhook_deliveries d set lease_until = ?
           from webhook_endpoints e
          where e.id = d.endpoint_id and d.id in (
            select w.id from webhook_deliveries w join (
              select head.id, head.next_attempt_at,
                     row_number() over (partition by head.user_id order by head.next_attempt_at, head.created_at, head.id)
                       + (select count(*) from webhook_deliveries busy join webhook_endpoints be on be.id = busy.endpoint_id
                           where be.user_id = head.user_id and busy.status = 'pending' and busy.lease_until > ?) as turn
                from (
                  select distinct on (c.endpoint_id) c.id, c.next_attempt_at, c.created_at, ce.user_id
                    from webhook_deliveries c join webhook_endpoints ce on ce.id = c.endpoint_id
                   where c.status = 'pending' and ce.enabled and c.next_attempt_at <= ? and (c.lease_until is null or c.lease_until <= ?)
                     and not exists (select 1 from webhook_deliveries busy where busy.endpoint_id = c.endpoint_id and busy.status = 'pending' and busy.lease_until > ?)
                   order by c.endpoint_id, c.next_attempt_at, c.created_at, c.id) head
            ) fair on fair.id = w.id
              -- rechecked on the row's latest version when another worker claimed it meanwhile (the subquery's snapshot is older)
              where w.status = 'pending' and (w.lease_until is null or w.lease_until <= ?)
            order by fair.turn, fair.next_attempt_at, w.id limit ? for update of w skip locked)
        returning d.id, d.message_id, d.payload, d.attempts, d.schedule_step, d.lease_until, e.id as endpoint_id, e.url, e.secret, e.previous_secret, e.previous_secret_expires_at`,
        [leaseUntil, now, now, now, now, now, limit],
      ),
    );
  }

  async #attempt(row: Claimed): Promise<void> {
    const now = this.#o.clock.now();
    const secrets = [row.secret, ...(row.previous_secret && row.previous_secret_expires_at && new Date(row.previous_secret_expires_at) > now ? [row.previous_secret] : [])];
    const headers = signedHeaders(row.message_id, Math.floor(now.getTime() / 1000), row.payload, secrets);
    const started = performance.now();
    let attempt: Attempt;
    try {
      const url = checkTargetUrl(row.url, this.#o.allowPrivate);
      const status = await this.#post(url, row.payload, headers);
      const ok = status >= 200 && status < 300;
      const error = ok ? null : status >= 300 && status < 400 ? `the receiver answered ${status} (redirects are not followed)` : `the receiver answered ${status}`;
      attempt = { ok, status, error, latencyMs: Math.round(performance.now() - started) };
    } catch (error) {
      if (error instanceof Stopped || this.#closed) return;
      attempt = { ok: false, status: null, error: describe(error), latencyMs: Math.round(performance.now() - started) };
    }
    await this.#record(row, attempt).catch((error: unknown) => this.#o.logger.warn({ err: error, delivery_id: row.id }, 'recording a webhook attempt failed; the delivery is tried again after its lease'));
  }

  /** POSTs the payload; the status code, or an error (timeout, refused target, network). The response body is not read: the status decides. */
  #post(url: URL, body: string, headers: Record<string, string>): Promise<number> {
    const client = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const request = client.request(url, {
        method: 'POST',
        agent: false,
        lookup: this.#lookup as never,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'Cutroom-Webhooks/1' },
      });
      this.#requests.add(request);
      const deadline = setTimeout(() => request.destroy(new Error(`no answer within ${this.#o.timeoutMs} ms`)), this.#o.timeoutMs);
      request.on('response', (response) => {
        // the status is the whole answer: the body is never read, the connection (never reused: no agent) is closed at once
        resolve(response.statusCode ?? 0);
        response.destroy();
      });
      request.on('error', reject);
      request.on('close', () => {
        clearTimeout(deadline);
        this.#requests.delete(request);
      });
      request.end(body);
    });
  }

  /** Writes the attempt's outcome, if this worker still holds the lease; disables an endpoint failing too long. */
  async #record(row: Claimed, attempt: Attempt): Promise<void> {
    const now = this.#o.clock.now();
    let disabled: { user_id: string; url: string } | undefined;
    await this.#o.orm.em.fork().transactional(async (em) => {
      const step = row.schedule_step;
      const delay = RETRY_SCHEDULE_MS[step];
      const next = attempt.ok || delay === undefined ? null : new Date(now.getTime() + this.#jittered(delay));
      const status = attempt.ok ? 'succeeded' : next ? 'pending' : 'failed';
      const updated = await em.execute<{ id: string }[]>(
        `update webhook_deliveries set status = ?, attempts = attempts + 1, schedule_step = ?, next_attempt_at = ?, lease_until = null, last_attempt_at = ?,
           response_status = ?, latency_ms = ?, last_error = ?
         where id = ? and lease_until = ? returning id`,
        [status, attempt.ok ? step : step + 1, next, now, attempt.status, attempt.latencyMs, attempt.error?.slice(0, ERROR_MAX) ?? null, row.id, row.lease_until],
      );
      if (updated.length === 0) return; // the lease ran out and another worker took the row
      if (attempt.ok) {
        await em.execute(`update webhook_endpoints set failing_since = null where id = ? and failing_since is not null`, [row.endpoint_id]);
        return;
      }
      disabled = await this.#noteFailure(em, row.endpoint_id, now);
    });
    this.#o.logger.info({ delivery_id: row.id, endpoint_id: row.endpoint_id, ok: attempt.ok, status: attempt.status, latency_ms: attempt.latencyMs, error: attempt.error }, 'webhook attempt');
    if (disabled) await this.#tellOwner(row.endpoint_id, disabled, attempt.error ?? '');
  }

  /** Marks the endpoint failing since now (unless it already was); past the limit it is disabled, and returned. */
  async #noteFailure(em: EntityManager, endpointId: string, now: Date): Promise<{ user_id: string; url: string } | undefined> {
    const [endpoint] = await em.execute<{ failing_since: Date; enabled: boolean; user_id: string; url: string }[]>(
      `update webhook_endpoints set failing_since = coalesce(failing_since, ?) where id = ? returning failing_since, enabled, user_id, url`,
      [now, endpointId],
    );
    if (!endpoint?.enabled || now.getTime() - new Date(endpoint.failing_since).getTime() < this.#o.disableAfterMs) return undefined;
    await em.execute(`update webhook_endpoints set enabled = false, disabled_reason = 'failing', updated_at = ? where id = ?`, [now, endpointId]);
    this.#o.logger.warn({ endpoint_id: endpointId, failing_since: endpoint.failing_since }, 'webhook endpoint disabled: its deliveries have failed too long');
    return { user_id: endpoint.user_id, url: endpoint.url };
  }

  async #tellOwner(endpointId: string, endpoint: { user_id: string; url: string }, error: string): Promise<void> {
    const [user] = await this.#o.orm.em.fork().execute<{ email: string; name: string; locale: string }[]>(`select email, name, locale from users where id = ?`, [endpoint.user_id]);
    if (!user) return;
    const locale = negotiateLocale(user.locale);
    const params = { name: user.name, url: endpoint.url, days: Math.round(this.#o.disableAfterMs / 86_400_000), error: error || '-', id: endpointId };
    await this.#o.mailer
      .send({ to: user.email, template: 'webhook_disabled', subject: translate(locale, 'webhook.mail.disabled.subject', params), text: translate(locale, 'webhook.mail.disabled.body', params) })
      .catch((failure: unknown) => this.#o.logger.error({ err: failure, endpoint_id: endpointId }, 'the mail telling a webhook endpoint was disabled could not be sent'));
  }

  #jittered(ms: number): number {
    const random = this.#o.random ?? Math.random;
    return Math.round(ms * (1 + (random() * 2 - 1) * JITTER));
  }
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as NodeJS.ErrnoException).code;
  return code && !error.message.includes(code) ? `${error.message} (${code})` : error.message;
}
