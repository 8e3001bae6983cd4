import { Migration } from '@mikro-orm/migrations';

/** Analysis runs and the edits of a project's timeline. */
export class Migration20261122120000Analysis extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "edits" ("id" uuid not null, "project_id" uuid not null, "run_id" uuid null, "type" varchar(32) not null, "start_ms" int not null, "end_ms" int not null, "active" boolean not null default true, "reason" text not null default '', "media_item_id" uuid null, "visual_mode" varchar(16) null, "audio_mode" varchar(16) null, "overlay" jsonb null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "edits_project_id_index" on "edits" ("project_id");`);
    this.addSql(`create index "edits_run_id_index" on "edits" ("run_id");`);
    this.addSql(`create index "edits_project_id_run_id_start_ms_index" on "edits" ("project_id", "run_id", "start_ms");`);
    this.addSql(`create table "analysis_runs" ("id" uuid not null, "project_id" uuid not null, "user_id" uuid not null, "status" text not null default 'queued', "pacing_level" smallint not null, "false_start_sensitivity" smallint not null, "language" varchar(8) null, "analysis_mode" varchar(16) not null, "director_notes" text null, "job_id" uuid null, "credits_reserved" numeric(10,1) not null, "credits_charged" numeric(10,1) null, "duration_ms" int null, "edit_count" int not null default 0, "silence_count" int not null default 0, "false_start_count" int not null default 0, "filler_count" int not null default 0, "transcript" jsonb null, "cost" jsonb null, "error" text null, "error_code" varchar(64) null, "error_params" jsonb null, "created_at" timestamptz not null, "completed_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "analysis_runs_project_id_index" on "analysis_runs" ("project_id");`);
    this.addSql(`create index "analysis_runs_user_id_index" on "analysis_runs" ("user_id");`);
    this.addSql(`create index "analysis_runs_project_id_created_at_index" on "analysis_runs" ("project_id", "created_at");`);
    this.addSql(`alter table "edits" add constraint "edits_project_id_foreign" foreign key ("project_id") references "projects" ("id") on delete cascade;`);
    this.addSql(`alter table "analysis_runs" add constraint "analysis_runs_project_id_foreign" foreign key ("project_id") references "projects" ("id") on delete cascade;`);
    this.addSql(`alter table "analysis_runs" add constraint "analysis_runs_status_check" check ("status" in ('queued', 'running', 'completed', 'failed'));`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "edits" cascade;`);
    this.addSql(`drop table if exists "analysis_runs" cascade;`);
  }
}
