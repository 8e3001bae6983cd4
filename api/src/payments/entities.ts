import { defineEntity, p } from '@mikro-orm/core';
import { tierNames } from '../billing/tiers.ts';

/**
 * A user's Stripe identities: the customer, the live subscription and a pending
 * schedule (a downgrade at period end). The plan itself lives in billing's subscriptions.
 */
export const PaymentCustomer = defineEntity({
  name: 'PaymentCustomer',
  tableName: 'payment_customers',
  properties: {
    userId: p.uuid().primary(),
    stripeCustomerId: p.string().length(255).unique(),
    stripeSubscriptionId: p.string().length(255).nullable(),
    /** The price table's id of the subscription's current price. */
    priceId: p.integer().nullable(),
    stripeScheduleId: p.string().length(255).nullable(),
    scheduledPriceId: p.integer().nullable(),
    updatedAt: p.datetime(),
  },
});

export type PaymentCustomerRow = InstanceType<typeof PaymentCustomer.class>;

/** Every Stripe event applied, by its id: a redelivered event finds its row and changes nothing. */
export const PaymentEvent = defineEntity({
  name: 'PaymentEvent',
  tableName: 'payment_events',
  properties: {
    eventId: p.string().length(255).primary(),
    type: p.string().length(255),
    processedAt: p.datetime(),
  },
});

const dueActionKinds = ['renewal_reminder', 'beta_renewal'] as const;
export type DueActionKind = (typeof dueActionKinds)[number];

/**
 * Work due at a moment (a reminder mail before renewal, a beta credit renewal), kept in
 * PostgreSQL so it survives restarts; a sweep claims due rows with SKIP LOCKED.
 */
export const DueAction = defineEntity({
  name: 'DueAction',
  tableName: 'payment_due_actions',
  properties: {
    id: p.uuid().primary(),
    userId: p.uuid().index(),
    kind: p.enum([...dueActionKinds]),
    dueAt: p.datetime().index(),
    doneAt: p.datetime().nullable(),
    attempts: p.integer().default(0),
    lastError: p.text().nullable(),
    createdAt: p.datetime(),
  },
  uniques: [{ name: 'payment_due_actions_user_kind_due_unique', properties: ['userId', 'kind', 'dueAt'] }],
});

export const cancellationOutcomes = ['cancelled', 'reminder_set', 'discount_accepted', 'kept_plan'] as const;
export type CancellationOutcome = (typeof cancellationOutcomes)[number];

/** Why a subscriber thought of leaving and what they chose, kept for the team. */
export const CancellationFeedback = defineEntity({
  name: 'CancellationFeedback',
  tableName: 'cancellation_feedback',
  properties: {
    id: p.uuid().primary(),
    userId: p.uuid().index(),
    reason: p.string().length(64),
    detail: p.text().nullable(),
    outcome: p.enum([...cancellationOutcomes]),
    /** The tier the user was on when they answered. */
    tier: p.enum([...tierNames]),
    createdAt: p.datetime(),
  },
});

