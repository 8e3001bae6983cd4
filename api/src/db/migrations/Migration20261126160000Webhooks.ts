import { Migration } from '@mikro-orm/migrations';

/** Webhook endpoints of users and their deliveries (the webhook outbox and delivery log). */
export class Migration20261126160000Webhooks extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "webhook_endpoints" ("id" uuid not null, "user_id" uuid not null, "url" varchar(2048) not null, "description" varchar(500) null, "event_types" text[] not null, "enabled" boolean not null default true, "secret" varchar(100) not null, "previous_secret" varchar(100) null, "previous_secret_expires_at" timestamptz null, "failing_since" timestamptz null, "disabled_reason" varchar(50) null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "webhook_endpoints_user_id_index" on "webhook_endpoints" ("user_id");`);
    this.addSql(`create table "webhook_deliveries" ("id" uuid not null, "endpoint_id" uuid not null, "message_id" varchar(64) not null, "event_type" varchar(64) not null, "payload" text not null, "status" text not null default 'pending', "attempts" int not null default 0, "schedule_step" int not null default 0, "next_attempt_at" timestamptz null, "lease_until" timestamptz null, "last_attempt_at" timestamptz null, "response_status" int null, "latency_ms" int null, "last_error" text null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "webhook_deliveries_endpoint_id_index" on "webhook_deliveries" ("endpoint_id");`);
    this.addSql(`create index "webhook_deliveries_status_next_attempt_at_index" on "webhook_deliveries" ("status", "next_attempt_at");`);
    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_endpoint_id_foreign" foreign key ("endpoint_id") references "webhook_endpoints" ("id") on delete cascade;`);
    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_status_check" check ("status" in ('pending', 'succeeded', 'failed'));`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "webhook_deliveries";`);
    this.addSql(`drop table if exists "webhook_endpoints";`);
  }
}
