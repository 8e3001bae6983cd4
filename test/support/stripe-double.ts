import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';

/**
 * A local stand-in for the few Stripe endpoints Cutroom calls, speaking Stripe's wire
 * format (form-encoded requests, JSON answers, Stripe error bodies) so the real `stripe`
 * SDK talks to it through its host/port/protocol options. It keeps state (customers,
 * subscriptions with items, prices, invoices, coupons, schedules, checkout sessions),
 * emits the events Stripe would and delivers them signed to the app's webhook.
 * Faults on demand: `delayMs` (slow), `stop()` (down), `declinePayments` (card declined).
 */

export interface DoublePrice {
  id: string;
  unitAmount: number;
  interval: 'month' | 'year';
}

/** Prices matching the default STRIPE_PRICES (amounts in cents). */
export const DEFAULT_PRICES: DoublePrice[] = [
  { id: 'price_hobby_month', unitAmount: 900, interval: 'month' },
  { id: 'price_hobby_year', unitAmount: 9000, interval: 'year' },
  { id: 'price_creator_month', unitAmount: 2900, interval: 'month' },
  { id: 'price_creator_year', unitAmount: 29000, interval: 'year' },
  { id: 'price_viral_month', unitAmount: 7900, interval: 'month' },
  { id: 'price_viral_year', unitAmount: 79000, interval: 'year' },
];

export interface RecordedCall {
  method: string;
  path: string;
  params: Record<string, unknown>;
  idempotencyKey: string | undefined;
}

export interface DoubleEvent {
  id: string;
  object: 'event';
  type: string;
  created: number;
  api_version: string;
  livemode: false;
  data: { object: Record<string, unknown> };
}

interface Subscription {
  id: string;
  customer: string;
  status: string;
  price: string;
  itemId: string;
  periodStart: number;
  periodEnd: number;
  schedule: string | null;
  discounts: string[];
  latestInvoice: string | null;
  metadata: Record<string, unknown>;
}

interface Invoice {
  id: string;
  customer: string;
  subscription: string | null;
  status: 'paid' | 'open';
  billingReason: string;
  lines: { amount: number; price: string }[];
  created: number;
}

interface Schedule {
  id: string;
  subscription: string;
  status: 'active' | 'released' | 'canceled';
  endBehavior: string;
  phases: { start_date?: number; end_date?: number; price: string }[];
}

interface CheckoutSession {
  id: string;
  customer: string;
  clientReferenceId: string | null;
  price: string;
  status: 'open' | 'complete';
  subscription: string | null;
  successUrl: string;
}

class StripeFailure extends Error {
  readonly status: number;
  readonly type: string;
  readonly code: string;

  constructor(status: number, type: string, code: string, message: string) {
    super(message);
    this.status = status;
    this.type = type;
    this.code = code;
  }
}

const DAY = 86_400;

export class StripeDouble {
  readonly calls: RecordedCall[] = [];
  readonly customers = new Map<string, { id: string; email: string; name: string; metadata: Record<string, unknown> }>();
  readonly subscriptions = new Map<string, Subscription>();
  readonly invoices = new Map<string, Invoice>();
  readonly schedules = new Map<string, Schedule>();
  readonly checkoutSessions = new Map<string, CheckoutSession>();
  readonly prices = new Map<string, DoublePrice>();
  readonly coupons = new Set<string>(['cutroom-retention']);
  readonly events: DoubleEvent[] = [];
  /** Status the app answered to each delivery, by event id (the last delivery wins). */
  readonly deliveries = new Map<string, number>();
  /** Every answer waits this long first; a client that gave up meanwhile changes nothing. */
  delayMs = 0;
  /** Payments are declined (card_declined) while set. */
  declinePayments = false;
  /** Deliver each event to `webhookUrl` as it happens (in order, one at a time). */
  autoDeliver = true;
  webhookUrl: string | undefined;
  readonly #secret: string;
  readonly #signer = new Stripe('sk_test_double_signer');
  readonly #server: Server;
  readonly #replies = new Map<string, { status: number; body: unknown }>();
  #port = 0;
  #sequence = 0;
  #offsetSeconds = 0;
  #queue: Promise<void> = Promise.resolve();

  private constructor(webhookSecret: string, prices: DoublePrice[]) {
    this.#secret = webhookSecret;
    for (const price of prices) this.prices.set(price.id, price);
    this.#server = createServer((request, response) => void this.#handle(request, response));
  }

  static async start(options: { webhookSecret: string; prices?: DoublePrice[] }): Promise<StripeDouble> {
    const double = new StripeDouble(options.webhookSecret, options.prices ?? DEFAULT_PRICES);
    await double.#listen(0);
    return double;
  }

  /** STRIPE_API_BASE for the app. */
  get url(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  /** Stripe's clock, in seconds; moved forward by renew(). */
  now(): number {
    return Math.floor(Date.now() / 1000) + this.#offsetSeconds;
  }

  /** Calls of one method and path pattern, e.g. callsTo('POST', /^\/v1\/subscriptions\/sub_/). */
  callsTo(method: string, path: RegExp): RecordedCall[] {
    return this.calls.filter((call) => call.method === method && path.test(call.path));
  }

  /** Stripe is down: connections are refused until resume(). */
  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async resume(): Promise<void> {
    await this.#listen(this.#port);
  }

  async close(): Promise<void> {
    await this.settled();
    if (this.#server.listening) await this.stop();
  }

  /** Waits until every event emitted so far was delivered. */
  async settled(): Promise<void> {
    for (let seen = -1; seen !== this.events.length; ) {
      seen = this.events.length;
      await this.#queue;
    }
  }

  /** The customer pays the Checkout session: a subscription starts, with its first invoice paid. */
  completeCheckout(sessionId: string): Subscription {
    const session = this.checkoutSessions.get(sessionId);
    if (!session) throw new Error(`no checkout session ${sessionId}`);
    const price = this.#price(session.price);
    const now = this.now();
    const subscription: Subscription = {
      id: this.#id('sub'),
      customer: session.customer,
      status: 'active',
      price: price.id,
      itemId: this.#id('si'),
      periodStart: now,
      periodEnd: now + periodSeconds(price.interval),
      schedule: null,
      discounts: [],
      latestInvoice: null,
      metadata: {},
    };
    this.subscriptions.set(subscription.id, subscription);
    const invoice = this.#invoice(subscription, 'subscription_create', [{ amount: price.unitAmount, price: price.id }], 'paid');
    session.status = 'complete';
    session.subscription = subscription.id;
    this.emit('checkout.session.completed', this.#sessionJson(session));
    this.emit('customer.subscription.created', this.#subscriptionJson(subscription));
    this.emit('invoice.paid', this.#invoiceJson(invoice));
    return subscription;
  }

  /**
   * The billing period ends: a schedule's next phase takes over, a new period starts and
   * its invoice is paid, or fails (declinePayments) and the subscription is past due.
   */
  renew(subscriptionId: string): Invoice {
    const subscription = this.#subscription(subscriptionId);
    this.#offsetSeconds += Math.max(0, subscription.periodEnd - this.now());
    const schedule = subscription.schedule ? this.schedules.get(subscription.schedule) : undefined;
    const next = schedule?.status === 'active' ? schedule.phases.find((phase) => phase.start_date === subscription.periodEnd) : undefined;
    if (next) subscription.price = next.price;
    const price = this.#price(subscription.price);
    subscription.periodStart = subscription.periodEnd;
    subscription.periodEnd = subscription.periodStart + periodSeconds(price.interval);
    return this.#chargePeriod(subscription, 'subscription_cycle');
  }

  /** A past-due invoice is paid at last (the customer fixed the card). */
  payOpenInvoice(subscriptionId: string): Invoice {
    const subscription = this.#subscription(subscriptionId);
    const invoice = this.invoices.get(subscription.latestInvoice ?? '');
    if (!invoice || invoice.status !== 'open') throw new Error('no open invoice');
    invoice.status = 'paid';
    subscription.status = 'active';
    this.emit('invoice.paid', this.#invoiceJson(invoice));
    this.emit('customer.subscription.updated', this.#subscriptionJson(subscription));
    return invoice;
  }

  /** Records an event as Stripe would send it and, with autoDeliver, queues its delivery. */
  emit(type: string, object: Record<string, unknown>): DoubleEvent {
    const event: DoubleEvent = {
      id: this.#id('evt'),
      object: 'event',
      type,
      created: this.now(),
      api_version: Stripe.API_VERSION,
      livemode: false,
      data: { object: structuredClone(object) },
    };
    this.events.push(event);
    if (this.autoDeliver && this.webhookUrl) this.#queue = this.#queue.then(() => this.deliver(event).then(() => undefined, () => undefined));
    return event;
  }

  /** Posts one event to the webhook, signed with the secret (or another, to test refusals). */
  async deliver(event: DoubleEvent, options: { secret?: string; url?: string } = {}): Promise<Response> {
    const payload = JSON.stringify(event);
    const signature = this.#signer.webhooks.generateTestHeaderString({ payload, secret: options.secret ?? this.#secret });
    const response = await fetch(options.url ?? this.webhookUrl!, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json; charset=utf-8', 'Stripe-Signature': signature },
      body: payload,
    });
    this.deliveries.set(event.id, response.status);
    // Read here, so a caller may read the answer again.
    const text = await response.text();
    return new Response(text, { status: response.status, headers: response.headers });
  }

  eventsOf(type: string): DoubleEvent[] {
    return this.events.filter((event) => event.type === type);
  }

  async #listen(port: number): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(port, '127.0.0.1', () => resolve()));
    this.#port = (this.#server.address() as AddressInfo).port;
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const url = new URL(request.url ?? '/', 'http://double');
    const method = request.method ?? 'GET';
    const params = parseForm(method === 'GET' ? url.search.slice(1) : Buffer.concat(chunks).toString('utf8'));
    const idempotencyKey = header(request, 'idempotency-key');
    if (this.delayMs) {
      await new Promise((resolve) => setTimeout(resolve, this.delayMs));
      // The client gave up (its timeout): like a request that never reached Stripe.
      if (request.socket.destroyed || response.destroyed) return;
    }
    this.calls.push({ method, path: url.pathname, params, idempotencyKey });
    const replayKey = idempotencyKey ? `${method} ${url.pathname} ${idempotencyKey}` : undefined;
    let reply = replayKey ? this.#replies.get(replayKey) : undefined;
    if (!reply) {
      try {
        reply = { status: 200, body: this.#route(method, url.pathname, params) };
      } catch (error) {
        if (!(error instanceof StripeFailure)) throw error;
        reply = { status: error.status, body: { error: { type: error.type, code: error.code, message: error.message } } };
      }
      if (replayKey) this.#replies.set(replayKey, reply);
    }
    response.writeHead(reply.status, { 'Content-Type': 'application/json', 'Request-Id': this.#id('req') });
    response.end(JSON.stringify(reply.body));
  }

  #route(method: string, path: string, params: Record<string, unknown>): unknown {
    const parts = path.split('/').filter(Boolean);
    const [version, resource, id, action] = parts;
    if (version !== 'v1') throw notFound(path);
    if (method === 'POST' && resource === 'customers' && !id) return this.#createCustomer(params);
    if (method === 'POST' && resource === 'checkout' && id === 'sessions' && !action) return this.#createCheckoutSession(params);
    if (resource === 'subscriptions' && id) {
      if (method === 'GET') return this.#subscriptionJson(this.#subscription(id));
      if (method === 'POST') return this.#updateSubscription(this.#subscription(id), params);
      if (method === 'DELETE') return this.#cancelSubscription(this.#subscription(id));
    }
    if (resource === 'subscription_schedules' && method === 'POST') {
      if (!id) return this.#createSchedule(params);
      if (action === 'release') return this.#releaseSchedule(this.#schedule(id));
      if (!action) return this.#updateSchedule(this.#schedule(id), params);
    }
    throw notFound(path);
  }

  #createCustomer(params: Record<string, unknown>): unknown {
    const customer = { id: this.#id('cus'), email: String(params.email ?? ''), name: String(params.name ?? ''), metadata: (params.metadata as Record<string, unknown>) ?? {} };
    this.customers.set(customer.id, customer);
    return { object: 'customer', ...customer };
  }

  #createCheckoutSession(params: Record<string, unknown>): unknown {
    const customer = String(params.customer ?? '');
    if (!this.customers.has(customer)) throw missing('customer', customer);
    const lineItems = (params.line_items as { price: string }[] | undefined) ?? [];
    const price = this.#price(lineItems[0]?.price ?? '');
    if (params.mode !== 'subscription') throw new StripeFailure(400, 'invalid_request_error', 'parameter_invalid', 'mode must be subscription here');
    const session: CheckoutSession = {
      id: this.#id('cs'),
      customer,
      clientReferenceId: (params.client_reference_id as string | undefined) ?? null,
      price: price.id,
      status: 'open',
      subscription: null,
      successUrl: String(params.success_url ?? ''),
    };
    this.checkoutSessions.set(session.id, session);
    return this.#sessionJson(session);
  }

  #updateSubscription(subscription: Subscription, params: Record<string, unknown>): unknown {
    if (subscription.status === 'canceled') throw new StripeFailure(400, 'invalid_request_error', 'resource_missing', 'A canceled subscription can only update its metadata.');
    let invoice: Invoice | undefined;
    const items = params.items as { id?: string; price?: string }[] | undefined;
    const discounts = params.discounts as { coupon?: string }[] | undefined;
    if (discounts?.length) {
      for (const { coupon } of discounts) if (!coupon || !this.coupons.has(coupon)) throw missing('coupon', coupon ?? '');
    }
    if (items?.[0]?.price) {
      if (items[0].id !== subscription.itemId) throw missing('subscription_item', items[0].id ?? '');
      const from = this.#price(subscription.price);
      const to = this.#price(items[0].price);
      const now = this.now();
      const unused = Math.max(0, (subscription.periodEnd - now) / (subscription.periodEnd - subscription.periodStart));
      // A new interval restarts the billing cycle and charges the new price in full.
      const restart = from.interval !== to.interval;
      const lines = [
        { amount: -Math.round(from.unitAmount * unused), price: from.id },
        { amount: restart ? to.unitAmount : Math.round(to.unitAmount * unused), price: to.id },
      ];
      const due = lines.reduce((sum, line) => sum + line.amount, 0);
      if (params.proration_behavior === 'always_invoice') {
        if (due > 0 && this.declinePayments && params.payment_behavior === 'error_if_incomplete') {
          throw new StripeFailure(402, 'card_error', 'card_declined', 'Your card was declined.');
        }
        subscription.price = to.id;
        if (restart) {
          subscription.periodStart = now;
          subscription.periodEnd = now + periodSeconds(to.interval);
        }
        invoice = this.#invoice(subscription, 'subscription_update', lines, due > 0 && this.declinePayments ? 'open' : 'paid');
      } else {
        subscription.price = to.id;
      }
    }
    if (discounts?.length) subscription.discounts.push(...discounts.map((discount) => discount.coupon!));
    if (params.metadata) Object.assign(subscription.metadata, params.metadata);
    this.emit('customer.subscription.updated', this.#subscriptionJson(subscription));
    if (invoice) this.emit(invoice.status === 'paid' ? 'invoice.paid' : 'invoice.payment_failed', this.#invoiceJson(invoice));
    const expand = (params.expand as string[] | undefined) ?? [];
    const json = this.#subscriptionJson(subscription);
    if (expand.includes('latest_invoice') && subscription.latestInvoice) json.latest_invoice = this.#invoiceJson(this.invoices.get(subscription.latestInvoice)!);
    return json;
  }

  #cancelSubscription(subscription: Subscription): unknown {
    if (subscription.status === 'canceled') throw new StripeFailure(400, 'invalid_request_error', 'resource_missing', 'Already canceled.');
    subscription.status = 'canceled';
    if (subscription.schedule) this.schedules.get(subscription.schedule)!.status = 'canceled';
    subscription.schedule = null;
    this.emit('customer.subscription.deleted', this.#subscriptionJson(subscription));
    return this.#subscriptionJson(subscription);
  }

  #createSchedule(params: Record<string, unknown>): unknown {
    const subscription = this.#subscription(String(params.from_subscription ?? ''));
    if (subscription.schedule) throw new StripeFailure(400, 'invalid_request_error', 'resource_already_exists', 'The subscription already has a schedule.');
    const schedule: Schedule = {
      id: this.#id('sub_sched'),
      subscription: subscription.id,
      status: 'active',
      endBehavior: 'release',
      phases: [{ start_date: subscription.periodStart, end_date: subscription.periodEnd, price: subscription.price }],
    };
    this.schedules.set(schedule.id, schedule);
    subscription.schedule = schedule.id;
    return this.#scheduleJson(schedule);
  }

  #updateSchedule(schedule: Schedule, params: Record<string, unknown>): unknown {
    if (schedule.status !== 'active') throw new StripeFailure(400, 'invalid_request_error', 'schedule_unexpected_status', 'The schedule is not active.');
    const phases = (params.phases as { start_date?: string; end_date?: string; items?: { price?: string }[] }[] | undefined) ?? [];
    let start: number | undefined;
    schedule.phases = phases.map((phase) => {
      const price = this.#price(phase.items?.[0]?.price ?? '').id;
      const startDate = phase.start_date ? Number(phase.start_date) : start;
      const endDate = phase.end_date ? Number(phase.end_date) : undefined;
      start = endDate;
      return { price, ...(startDate !== undefined ? { start_date: startDate } : {}), ...(endDate !== undefined ? { end_date: endDate } : {}) };
    });
    if (params.end_behavior) schedule.endBehavior = String(params.end_behavior);
    return this.#scheduleJson(schedule);
  }

  #releaseSchedule(schedule: Schedule): unknown {
    if (schedule.status !== 'active') throw new StripeFailure(400, 'invalid_request_error', 'schedule_unexpected_status', 'The schedule is not active.');
    schedule.status = 'released';
    const subscription = this.subscriptions.get(schedule.subscription);
    if (subscription) subscription.schedule = null;
    return this.#scheduleJson(schedule);
  }

  #chargePeriod(subscription: Subscription, reason: string): Invoice {
    const price = this.#price(subscription.price);
    const paid = !this.declinePayments;
    const invoice = this.#invoice(subscription, reason, [{ amount: price.unitAmount, price: price.id }], paid ? 'paid' : 'open');
    subscription.status = paid ? 'active' : 'past_due';
    this.emit(paid ? 'invoice.paid' : 'invoice.payment_failed', this.#invoiceJson(invoice));
    this.emit('customer.subscription.updated', this.#subscriptionJson(subscription));
    return invoice;
  }

  #invoice(subscription: Subscription, billingReason: string, lines: Invoice['lines'], status: Invoice['status']): Invoice {
    const invoice: Invoice = { id: this.#id('in'), customer: subscription.customer, subscription: subscription.id, status, billingReason, lines, created: this.now() };
    this.invoices.set(invoice.id, invoice);
    subscription.latestInvoice = invoice.id;
    return invoice;
  }

  #subscription(id: string): Subscription {
    const subscription = this.subscriptions.get(id);
    if (!subscription) throw missing('subscription', id);
    return subscription;
  }

  #schedule(id: string): Schedule {
    const schedule = this.schedules.get(id);
    if (!schedule) throw missing('subscription_schedule', id);
    return schedule;
  }

  #price(id: string): DoublePrice {
    const price = this.prices.get(id);
    if (!price) throw missing('price', id);
    return price;
  }

  #subscriptionJson(subscription: Subscription): Record<string, unknown> {
    const price = this.#price(subscription.price);
    return {
      id: subscription.id,
      object: 'subscription',
      customer: subscription.customer,
      status: subscription.status,
      schedule: subscription.schedule,
      cancel_at_period_end: false,
      discounts: subscription.discounts.map((coupon) => ({ object: 'discount', coupon: { id: coupon } })),
      latest_invoice: subscription.latestInvoice,
      metadata: subscription.metadata,
      items: {
        object: 'list',
        data: [
          {
            id: subscription.itemId,
            object: 'subscription_item',
            quantity: 1,
            price: { id: price.id, object: 'price', unit_amount: price.unitAmount, recurring: { interval: price.interval, interval_count: 1 } },
            current_period_start: subscription.periodStart,
            current_period_end: subscription.periodEnd,
          },
        ],
      },
    };
  }

  #invoiceJson(invoice: Invoice): Record<string, unknown> {
    const total = invoice.lines.reduce((sum, line) => sum + line.amount, 0);
    return {
      id: invoice.id,
      object: 'invoice',
      customer: invoice.customer,
      status: invoice.status,
      billing_reason: invoice.billingReason,
      amount_due: Math.max(0, total),
      amount_paid: invoice.status === 'paid' ? Math.max(0, total) : 0,
      created: invoice.created,
      parent: invoice.subscription ? { type: 'subscription_details', subscription_details: { subscription: invoice.subscription, metadata: {} } } : null,
      lines: {
        object: 'list',
        data: invoice.lines.map((line, index) => ({
          id: `${invoice.id}_il_${index}`,
          object: 'line_item',
          amount: line.amount,
          pricing: { type: 'price_details', price_details: { price: line.price, product: `prod_${line.price}` } },
        })),
      },
    };
  }

  #scheduleJson(schedule: Schedule): Record<string, unknown> {
    return {
      id: schedule.id,
      object: 'subscription_schedule',
      subscription: schedule.subscription,
      status: schedule.status,
      end_behavior: schedule.endBehavior,
      phases: schedule.phases.map((phase) => ({ start_date: phase.start_date ?? null, end_date: phase.end_date ?? null, items: [{ price: phase.price, quantity: 1 }] })),
    };
  }

  #sessionJson(session: CheckoutSession): Record<string, unknown> {
    return {
      id: session.id,
      object: 'checkout.session',
      mode: 'subscription',
      url: `${this.url}/pay/${session.id}`,
      customer: session.customer,
      client_reference_id: session.clientReferenceId,
      status: session.status,
      subscription: session.subscription,
      success_url: session.successUrl,
    };
  }

  #id(prefix: string): string {
    return `${prefix}_${(++this.#sequence).toString(36).padStart(6, '0')}${Math.random().toString(36).slice(2, 8)}`;
  }
}

function periodSeconds(interval: 'month' | 'year'): number {
  return (interval === 'year' ? 365 : 30) * DAY;
}

function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function missing(kind: string, id: string): StripeFailure {
  return new StripeFailure(404, 'invalid_request_error', 'resource_missing', `No such ${kind}: '${id}'`);
}

function notFound(path: string): StripeFailure {
  return new StripeFailure(404, 'invalid_request_error', 'resource_missing', `Unrecognized request URL (${path}).`);
}

/** Stripe's form encoding (`items[0][price]=…`, `expand[0]=…`) as nested objects and arrays. */
export function parseForm(text: string): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const path = key.split(/\[|\]\[|\]/).filter((part, index) => part !== '' || index === 0);
    let node: Record<string, unknown> = root;
    path.forEach((part, index) => {
      if (index === path.length - 1) node[part] = value;
      else node = (node[part] ??= {}) as Record<string, unknown>;
    });
  }
  return arrays(root) as Record<string, unknown>;
}

/** Objects whose keys are 0, 1, 2 … become arrays. */
function arrays(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>).map(([key, inner]) => [key, arrays(inner)] as const);
  const indexed = entries.length > 0 && entries.every(([key]) => /^\d+$/.test(key));
  if (indexed) return entries.sort(([a], [b]) => Number(a) - Number(b)).map(([, inner]) => inner);
  return Object.fromEntries(entries);
}
