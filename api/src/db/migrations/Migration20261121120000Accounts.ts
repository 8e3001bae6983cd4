import { Migration } from '@mikro-orm/migrations';

/** Accounts (users, identity-provider links, deleted-account tombstones) and the billing core (subscriptions, credit ledger). */
export class Migration20261121120000Accounts extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "deleted_accounts" ("email_hash" varchar(64) not null, "trial_used" boolean not null default false, "deleted_at" timestamptz not null, primary key ("email_hash"));`);
    this.addSql(`create table "users" ("id" uuid not null, "name" varchar(100) not null, "username" varchar(40) not null, "email" varchar(320) not null, "password_hash" varchar(100) null, "email_verified" boolean not null default false, "locale" varchar(8) not null default 'en', "is_superuser" boolean not null default false, "storage_used_bytes" bigint not null default '0', "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "users" add constraint "users_email_unique" unique ("email");`);
    this.addSql(`create unique index "users_username_lower_unique" on "users" (lower("username"));`);
    this.addSql(`create table "subscriptions" ("user_id" uuid not null, "tier" text not null default 'Free', "status" text not null default 'none', "billing_interval" varchar(16) not null default 'month', "trial_used" boolean not null default false, "trial_ends_at" timestamptz null, "discount_used" boolean not null default false, "current_period_end" timestamptz null, "is_beta" boolean not null default false, "beta_credits_used" numeric(10,1) null, "beta_credits_total" numeric(10,1) null, "beta_renewal_date" timestamptz null, "updated_at" timestamptz not null, primary key ("user_id"));`);
    this.addSql(`create table "credit_entries" ("id" uuid not null, "user_id" uuid not null, "kind" text not null, "minutes" numeric(10,1) not null, "reference" varchar(255) not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "credit_entries_user_id_index" on "credit_entries" ("user_id");`);
    this.addSql(`alter table "credit_entries" add constraint "credit_entries_user_kind_reference_unique" unique ("user_id", "kind", "reference");`);
    this.addSql(`create table "user_identities" ("id" uuid not null, "user_id" uuid not null, "issuer" varchar(255) not null, "subject" varchar(255) not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "user_identities_user_id_index" on "user_identities" ("user_id");`);
    this.addSql(`alter table "user_identities" add constraint "user_identities_issuer_subject_unique" unique ("issuer", "subject");`);
    this.addSql(`alter table "subscriptions" add constraint "subscriptions_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "subscriptions" add constraint "subscriptions_tier_check" check ("tier" in ('Free', 'Hobby', 'Creator', 'Viral'));`);
    this.addSql(`alter table "subscriptions" add constraint "subscriptions_status_check" check ("status" in ('none', 'trialing', 'active', 'past_due', 'canceled'));`);
    this.addSql(`alter table "credit_entries" add constraint "credit_entries_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`);
    this.addSql(`alter table "credit_entries" add constraint "credit_entries_kind_check" check ("kind" in ('grant', 'reserve', 'deduct', 'release'));`);
    this.addSql(`alter table "user_identities" add constraint "user_identities_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "credit_entries" cascade;`);
    this.addSql(`drop table if exists "subscriptions" cascade;`);
    this.addSql(`drop table if exists "user_identities" cascade;`);
    this.addSql(`drop table if exists "deleted_accounts" cascade;`);
    this.addSql(`drop table if exists "users" cascade;`);
  }
}
