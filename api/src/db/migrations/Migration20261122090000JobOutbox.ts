import { Migration } from '@mikro-orm/migrations';

/**
 * The jobs table becomes an outbox: a row is written with the change that asks for it and
 * dispatched after commit. Rows written before this migration had been dispatched.
 */
export class Migration20261122090000JobOutbox extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "jobs" add "backend" varchar(16) not null default 'local', add "timeout_seconds" int not null default 3600, add "credit_minutes" numeric(10,1) null, add "dispatched_at" timestamptz null, add "dispatch_attempts" int not null default 0, add "next_dispatch_at" timestamptz null, add "dispatch_error" text null;`);
    this.addSql(`update "jobs" set "dispatched_at" = "created_at";`);
    this.addSql(`create index "jobs_undispatched_index" on "jobs" ("backend", "created_at") where "dispatched_at" is null and "completed_at" is null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "jobs_undispatched_index";`);
    this.addSql(`alter table "jobs" drop column "dispatch_error", drop column "next_dispatch_at", drop column "dispatch_attempts", drop column "dispatched_at", drop column "credit_minutes", drop column "timeout_seconds", drop column "backend";`);
  }
}
