import { Migration } from '@mikro-orm/migrations';

/** The job records and the media files and items they work on. */
export class Migration20261121130000JobsAndMedia extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "jobs" ("id" uuid not null, "kind" varchar(32) not null, "program" varchar(63) not null, "user_id" uuid not null, "project_id" uuid null, "media_file_id" uuid null, "input" jsonb not null, "output_prefix" varchar(1024) not null, "status" text not null default 'queued', "progress" smallint not null default 0, "step" varchar(256) null, "error" text null, "result" jsonb null, "created_at" timestamptz not null, "started_at" timestamptz null, "finished_at" timestamptz null, "completed_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "jobs_user_id_index" on "jobs" ("user_id");`);
    this.addSql(`create index "jobs_media_file_id_index" on "jobs" ("media_file_id");`);
    this.addSql(`create table "media_files" ("id" uuid not null, "uploader_id" uuid not null, "status" text not null default 'PENDING', "storage_key" varchar(1024) not null, "content_type" varchar(255) not null, "original_filename" varchar(255) not null, "declared_size_bytes" bigint not null, "size_bytes" bigint null, "sha256_hash" varchar(64) null, "external_video_id" varchar(255) null, "kind" varchar(16) null, "duration_ms" int null, "has_audio" boolean not null default false, "width" int null, "height" int null, "video_codec" varchar(64) null, "audio_codec" varchar(64) null, "container" varchar(128) null, "waveform_json" jsonb null, "thumbnail_key" varchar(1024) null, "audio_key" varchar(1024) null, "proxy_key" varchar(1024) null, "sprite_key" varchar(1024) null, "sprite" jsonb null, "proxy_status" text not null default 'unknown', "upload_id" varchar(1024) null, "parts_count" int null, "part_size_bytes" int null, "error" text null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "media_files_uploader_id_index" on "media_files" ("uploader_id");`);
    this.addSql(`create index "media_files_sha256_hash_index" on "media_files" ("sha256_hash");`);
    this.addSql(`create index "media_files_external_video_id_index" on "media_files" ("external_video_id");`);
    this.addSql(`create table "media_items" ("id" uuid not null, "user_id" uuid not null, "media_file_id" uuid not null, "scope" text not null, "scope_project_id" uuid null, "display_name" varchar(255) null, "tags" text[] not null default '{}', "behavior_defaults" jsonb not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "media_items_user_id_index" on "media_items" ("user_id");`);
    this.addSql(`create index "media_items_media_file_id_index" on "media_items" ("media_file_id");`);
    this.addSql(`create index "media_items_scope_project_id_index" on "media_items" ("scope_project_id");`);
    this.addSql(`alter table "jobs" add constraint "jobs_status_check" check ("status" in ('queued', 'running', 'succeeded', 'failed', 'cancelled'));`);
    this.addSql(`alter table "media_files" add constraint "media_files_status_check" check ("status" in ('PENDING', 'MULTIPART_INITIATED', 'PROCESSING', 'UPLOADED', 'FAILED'));`);
    this.addSql(`alter table "media_files" add constraint "media_files_proxy_status_check" check ("proxy_status" in ('not_applicable', 'pending', 'ready', 'unknown'));`);
    this.addSql(`alter table "media_items" add constraint "media_items_media_file_id_foreign" foreign key ("media_file_id") references "media_files" ("id");`);
    this.addSql(`alter table "media_items" add constraint "media_items_scope_check" check ("scope" in ('library', 'project'));`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "media_items" cascade;`);
    this.addSql(`drop table if exists "media_files" cascade;`);
    this.addSql(`drop table if exists "jobs" cascade;`);
  }
}
