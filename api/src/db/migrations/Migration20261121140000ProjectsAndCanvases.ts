import { Migration } from '@mikro-orm/migrations';

/** Projects and their media spine: canvases and the media each canvas shows. */
export class Migration20261121140000ProjectsAndCanvases extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "projects" ("id" uuid not null, "user_id" uuid not null, "name" varchar(200) not null, "status" text not null default 'created', "settings" jsonb not null, "transcript" jsonb null, "active_run_id" uuid null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "projects_user_id_index" on "projects" ("user_id");`);
    this.addSql(`create index "projects_user_id_created_at_index" on "projects" ("user_id", "created_at");`);
    this.addSql(`create table "canvases" ("id" uuid not null, "project_id" uuid not null, "type" text not null, "sequence_position" int not null, "params" jsonb not null, "crop" jsonb null, "aspect" varchar(16) null, "letterbox" jsonb null, "flags" jsonb not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "canvases_project_id_index" on "canvases" ("project_id");`);
    this.addSql(`create index "canvases_project_id_sequence_position_index" on "canvases" ("project_id", "sequence_position");`);
    this.addSql(`create table "canvas_media" ("id" uuid not null, "canvas_id" uuid not null, "media_item_id" uuid not null, "role" text not null, primary key ("id"));`);
    this.addSql(`create index "canvas_media_canvas_id_index" on "canvas_media" ("canvas_id");`);
    this.addSql(`create index "canvas_media_media_item_id_index" on "canvas_media" ("media_item_id");`);
    this.addSql(`alter table "canvas_media" add constraint "canvas_media_canvas_id_role_media_item_id_unique" unique ("canvas_id", "role", "media_item_id");`);
    this.addSql(`alter table "projects" add constraint "projects_status_check" check ("status" in ('created', 'analyzing', 'analyzed', 'failed'));`);
    this.addSql(`alter table "canvases" add constraint "canvases_project_id_foreign" foreign key ("project_id") references "projects" ("id") on delete cascade;`);
    this.addSql(`alter table "canvases" add constraint "canvases_type_check" check ("type" in ('SINGLE', 'SPLIT', 'TALKING_HEAD', 'INSERT', 'GRID'));`);
    this.addSql(`alter table "canvas_media" add constraint "canvas_media_canvas_id_foreign" foreign key ("canvas_id") references "canvases" ("id") on delete cascade;`);
    this.addSql(`alter table "canvas_media" add constraint "canvas_media_media_item_id_foreign" foreign key ("media_item_id") references "media_items" ("id") on delete cascade;`);
    this.addSql(`alter table "canvas_media" add constraint "canvas_media_role_check" check ("role" in ('CANVAS_FILL', 'CO_STAR', 'INSERT_ASSET'));`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "canvas_media" cascade;`);
    this.addSql(`drop table if exists "canvases" cascade;`);
    this.addSql(`drop table if exists "projects" cascade;`);
  }
}
