import { expect } from 'chai';
import { configSchema } from '../../api/src/config.ts';
import { DomainError } from '../../api/src/shared/errors.ts';
import { comparePlans, PriceTable } from '../../api/src/payments/price-table.ts';

describe('payments: the price table (STRIPE_PRICES)', () => {
  it('maps the spec\'s integer price_id to tier, interval and Stripe price; the default has Hobby, Creator and Viral by month and year', () => {
    const table = new PriceTable(configSchema.parse({}).STRIPE_PRICES);
    expect(table.all().map((price) => [price.id, price.tier, price.interval])).to.deep.equal([
      [1, 'Hobby', 'month'],
      [2, 'Hobby', 'year'],
      [3, 'Creator', 'month'],
      [4, 'Creator', 'year'],
      [5, 'Viral', 'month'],
      [6, 'Viral', 'year'],
    ]);
    expect(table.byId(3).stripePrice).to.equal('price_creator_month');
    expect(table.byStripePrice('price_viral_year')?.id).to.equal(6);
  });

  it('an unknown price_id → 422 (payments.unknown_price)', () => {
    const table = new PriceTable('7:Creator:month:price_x');
    let thrown: unknown;
    try {
      table.byId(8);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).to.be.instanceOf(DomainError);
    expect(thrown).to.include({ kind: 'invalid', key: 'payments.unknown_price' });
  });

  it('a malformed table stops start-up: a Free price, an unknown interval, a repeated id', () => {
    expect(() => new PriceTable('1:Free:month:price_free')).to.throw(/STRIPE_PRICES/);
    expect(() => new PriceTable('1:Hobby:week:price_w')).to.throw(/STRIPE_PRICES/);
    expect(() => new PriceTable('1:Hobby:month:a,1:Viral:month:b')).to.throw(/repeats/);
  });

  it('plans compare by tier, and on one tier a year is above a month', () => {
    expect(comparePlans({ tier: 'Creator', interval: 'month' }, { tier: 'Hobby', interval: 'year' })).to.be.greaterThan(0);
    expect(comparePlans({ tier: 'Creator', interval: 'year' }, { tier: 'Creator', interval: 'month' })).to.be.greaterThan(0);
    expect(comparePlans({ tier: 'Hobby', interval: 'year' }, { tier: 'Viral', interval: 'month' })).to.be.lessThan(0);
    expect(comparePlans({ tier: 'Viral', interval: 'month' }, { tier: 'Viral', interval: 'month' })).to.equal(0);
  });
});
