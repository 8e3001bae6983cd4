import { Migration } from '@mikro-orm/migrations';

/** Exports of a project (gone with their project; the sweep deletes outputs past expires_at). */
export class Migration20261123170000Exports extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "exports" ("id" uuid not null, "project_id" uuid not null, "user_id" uuid not null, "draft_id" uuid null, "name" varchar(200) not null, "export_settings" jsonb not null, "status" text not null default 'queued', "expires_at" timestamptz not null, "watermark_required" boolean not null, "filename" varchar(255) not null, "job_id" uuid null, "storage_key" varchar(1024) null, "size_bytes" bigint null, "duration_ms" int null, "render_path" varchar(16) null, "error" text null, "error_code" varchar(64) null, "error_params" jsonb null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "completed_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "exports_user_id_index" on "exports" ("user_id");`);
    this.addSql(`create index "exports_project_id_created_at_index" on "exports" ("project_id", "created_at");`);
    this.addSql(`create index "exports_status_expires_at_index" on "exports" ("status", "expires_at");`);
    this.addSql(`alter table "exports" add constraint "exports_project_id_foreign" foreign key ("project_id") references "projects" ("id") on delete cascade;`);
    this.addSql(`alter table "exports" add constraint "exports_status_check" check ("status" in ('queued', 'rendering', 'completed', 'failed', 'expired'));`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "exports" cascade;`);
  }
}
