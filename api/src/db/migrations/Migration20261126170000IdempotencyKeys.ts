import { Migration } from '@mikro-orm/migrations';

/** Idempotency-Key records: one per user and key, a running request's lease, then the response replayed for 24 hours. */
export class Migration20261126170000IdempotencyKeys extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "idempotency_keys" ("user_id" uuid not null, "key" varchar(255) not null, "request_hash" varchar(64) not null, "method" varchar(8) not null, "route" varchar(255) not null, "lease_token" uuid not null, "lease_expires_at" timestamptz not null, "response_status" int null, "response_headers" jsonb null, "response_body" text null, "response_omitted" boolean not null default false, "created_at" timestamptz not null, primary key ("user_id", "key"));`);
    this.addSql(`create index "idempotency_keys_created_at_index" on "idempotency_keys" ("created_at");`);
    this.addSql(`alter table "idempotency_keys" add constraint "idempotency_keys_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "idempotency_keys" cascade;`);
  }
}
