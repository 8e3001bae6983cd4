import { z } from 'zod';
import { tierNames, type TierName } from '../billing/tiers.ts';
import { Invalid } from '../shared/errors.ts';

const billingIntervals = ['month', 'year'] as const;
export type BillingInterval = (typeof billingIntervals)[number];

/** One row of the price table: the integer clients send, what it buys, and Stripe's price. */
export interface PlanPrice {
  id: number;
  tier: TierName;
  interval: BillingInterval;
  stripePrice: string;
}

const Row = z.tuple([z.coerce.number().int().positive(), z.enum(tierNames).exclude(['Free']), z.enum(billingIntervals), z.string().min(1)]);

/** Plans compare by tier first; on one tier a year is above a month (it is charged now, like an upgrade). */
function rank(plan: Pick<PlanPrice, 'tier' | 'interval'>): number {
  return tierNames.indexOf(plan.tier) * 2 + (plan.interval === 'year' ? 1 : 0);
}

/** STRIPE_PRICES parsed: `price_id:tier:interval:stripe_price`, comma-separated. */
export class PriceTable {
  readonly #byId = new Map<number, PlanPrice>();
  readonly #byStripePrice = new Map<string, PlanPrice>();

  constructor(spec: string) {
    for (const entry of spec.split(',').map((part) => part.trim()).filter(Boolean)) {
      const parsed = Row.safeParse(entry.split(':'));
      if (!parsed.success) throw new Error(`STRIPE_PRICES: "${entry}" is not price_id:tier:interval:stripe_price`);
      const [id, tier, interval, stripePrice] = parsed.data;
      if (this.#byId.has(id) || this.#byStripePrice.has(stripePrice)) throw new Error(`STRIPE_PRICES: "${entry}" repeats an id or a Stripe price`);
      const price = { id, tier, interval, stripePrice };
      this.#byId.set(id, price);
      this.#byStripePrice.set(stripePrice, price);
    }
  }

  /** The price a client named; 422 for an id the table does not have. */
  byId(id: number): PlanPrice {
    const price = this.#byId.get(id);
    if (!price) throw Invalid('payments.unknown_price', { params: { price_id: id } });
    return price;
  }

  byStripePrice(stripePrice: string): PlanPrice | undefined {
    return this.#byStripePrice.get(stripePrice);
  }

  all(): PlanPrice[] {
    return [...this.#byId.values()];
  }
}

/** Negative: `to` is below `from` (a downgrade); positive: above (an upgrade); 0: the same plan. */
export function comparePlans(to: Pick<PlanPrice, 'tier' | 'interval'>, from: Pick<PlanPrice, 'tier' | 'interval'>): number {
  return rank(to) - rank(from);
}
