import { Migration } from '@mikro-orm/migrations';

/** Drafts of a project (gone with their project). */
export class Migration20261123140000Drafts extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "drafts" ("id" uuid not null, "project_id" uuid not null, "run_id" uuid null, "name" varchar(200) not null, "edit_overrides" jsonb not null, "export_settings" jsonb not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "drafts_project_id_created_at_index" on "drafts" ("project_id", "created_at");`);
    this.addSql(`alter table "drafts" add constraint "drafts_project_id_foreign" foreign key ("project_id") references "projects" ("id") on delete cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "drafts" cascade;`);
  }
}
