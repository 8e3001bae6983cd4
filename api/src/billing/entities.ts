import { defineEntity, p } from '@mikro-orm/core';
import { User } from '../accounts/entities.ts';
import { tierNames } from './tiers.ts';

export const subscriptionStatuses = ['none', 'trialing', 'active', 'past_due', 'canceled'] as const;
export type SubscriptionStatus = (typeof subscriptionStatuses)[number];

const creditKinds = ['grant', 'reserve', 'deduct', 'release'] as const;

/**
 * A user's plan as stored: what they pay for (or trial), never the effective tier,
 * which depends on the time it is read (see effectivePlan in billing-service.ts).
 */
export const Subscription = defineEntity({
  name: 'Subscription',
  tableName: 'subscriptions',
  properties: {
    user: () => p.oneToOne(User).primary().owner().deleteRule('cascade').fieldName('user_id'),
    tier: p.enum([...tierNames]).default('Free'),
    status: p.enum([...subscriptionStatuses]).default('none'),
    billingInterval: p.string().length(16).default('month'),
    trialUsed: p.boolean().default(false),
    trialEndsAt: p.datetime().nullable(),
    discountUsed: p.boolean().default(false),
    currentPeriodEnd: p.datetime().nullable(),
    /** Past due since a failed renewal: the paid tier holds until then (PAYMENT_GRACE_DAYS). */
    graceEndsAt: p.datetime().nullable(),
    /** A downgrade waiting for the end of the billing period. */
    scheduledTier: p.enum([...tierNames]).nullable(),
    scheduledBillingInterval: p.string().length(16).nullable(),
    scheduledAt: p.datetime().nullable(),
    isBeta: p.boolean().default(false),
    betaCreditsTotal: p.decimal('number').precision(10).scale(1).nullable(),
    betaRenewalDate: p.datetime().nullable(),
    /** Start of the current beta credit period: beta_credits_used counts deductions since. */
    betaPeriodStart: p.datetime().nullable(),
    updatedAt: p.datetime(),
  },
});

export type SubscriptionRow = InstanceType<typeof Subscription.class>;

/**
 * One change of a user's AI minutes. Balance and reserved are sums over these rows,
 * never stored; (user, kind, reference) is unique so settling a job twice is a no-op.
 */
export const CreditEntry = defineEntity({
  name: 'CreditEntry',
  tableName: 'credit_entries',
  properties: {
    id: p.uuid().primary(),
    user: () => p.manyToOne(User).deleteRule('cascade').fieldName('user_id').index(),
    kind: p.enum([...creditKinds]),
    minutes: p.decimal('number').precision(10).scale(1),
    /** The job, analysis run or grant this row belongs to, e.g. `trial` or `analysis:<run id>`. */
    reference: p.string().length(255),
    createdAt: p.datetime(),
  },
  uniques: [{ name: 'credit_entries_user_kind_reference_unique', properties: ['user', 'kind', 'reference'] }],
});

