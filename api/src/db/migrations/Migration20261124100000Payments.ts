import { Migration } from '@mikro-orm/migrations';

/**
 * Payments on Stripe: customers and subscriptions linked to users, events applied once,
 * due actions (reminders, beta renewals), cancellation feedback; on subscriptions the
 * grace of a past-due plan, a scheduled downgrade and the beta period start.
 */
export class Migration20261124100000Payments extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "payment_customers" ("user_id" uuid not null, "stripe_customer_id" varchar(255) not null, "stripe_subscription_id" varchar(255) null, "price_id" int null, "stripe_schedule_id" varchar(255) null, "scheduled_price_id" int null, "updated_at" timestamptz not null, primary key ("user_id"));`);
    this.addSql(`alter table "payment_customers" add constraint "payment_customers_stripe_customer_id_unique" unique ("stripe_customer_id");`);
    this.addSql(`create table "payment_events" ("event_id" varchar(255) not null, "type" varchar(255) not null, "processed_at" timestamptz not null, primary key ("event_id"));`);
    this.addSql(`create table "payment_due_actions" ("id" uuid not null, "user_id" uuid not null, "kind" text not null, "due_at" timestamptz not null, "done_at" timestamptz null, "attempts" int not null default 0, "last_error" text null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "payment_due_actions_user_id_index" on "payment_due_actions" ("user_id");`);
    this.addSql(`create index "payment_due_actions_due_at_index" on "payment_due_actions" ("due_at");`);
    this.addSql(`alter table "payment_due_actions" add constraint "payment_due_actions_user_kind_due_unique" unique ("user_id", "kind", "due_at");`);
    this.addSql(`alter table "payment_due_actions" add constraint "payment_due_actions_kind_check" check ("kind" in ('renewal_reminder', 'beta_renewal'));`);
    this.addSql(`create table "cancellation_feedback" ("id" uuid not null, "user_id" uuid not null, "reason" varchar(64) not null, "detail" text null, "outcome" text not null, "tier" text not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "cancellation_feedback_user_id_index" on "cancellation_feedback" ("user_id");`);
    this.addSql(`alter table "cancellation_feedback" add constraint "cancellation_feedback_outcome_check" check ("outcome" in ('cancelled', 'reminder_set', 'discount_accepted', 'kept_plan'));`);
    this.addSql(`alter table "cancellation_feedback" add constraint "cancellation_feedback_tier_check" check ("tier" in ('Free', 'Hobby', 'Creator', 'Viral'));`);
    // beta_credits_used is derived from the ledger now (deductions since the beta period started).
    this.addSql(`alter table "subscriptions" drop column "beta_credits_used";`);
    this.addSql(`alter table "subscriptions" add "grace_ends_at" timestamptz null, add "scheduled_tier" text null, add "scheduled_billing_interval" varchar(16) null, add "scheduled_at" timestamptz null, add "beta_period_start" timestamptz null;`);
    this.addSql(`alter table "subscriptions" add constraint "subscriptions_scheduled_tier_check" check ("scheduled_tier" in ('Free', 'Hobby', 'Creator', 'Viral'));`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "subscriptions" drop constraint "subscriptions_scheduled_tier_check";`);
    this.addSql(`alter table "subscriptions" drop column "grace_ends_at", drop column "scheduled_tier", drop column "scheduled_billing_interval", drop column "scheduled_at", drop column "beta_period_start";`);
    this.addSql(`alter table "subscriptions" add "beta_credits_used" numeric(10,1) null;`);
    this.addSql(`drop table if exists "cancellation_feedback" cascade;`);
    this.addSql(`drop table if exists "payment_due_actions" cascade;`);
    this.addSql(`drop table if exists "payment_events" cascade;`);
    this.addSql(`drop table if exists "payment_customers" cascade;`);
  }
}
