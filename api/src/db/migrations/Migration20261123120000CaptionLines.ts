import { Migration } from '@mikro-orm/migrations';

/** Caption lines of an analysis run (gone with their run and their project). */
export class Migration20261123120000CaptionLines extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "caption_lines" ("id" uuid not null, "project_id" uuid not null, "run_id" uuid not null, "sequence" int not null, "start_ms" int not null, "end_ms" int not null, "text" text not null, "original_text" text not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "caption_lines_project_id_index" on "caption_lines" ("project_id");`);
    this.addSql(`alter table "caption_lines" add constraint "caption_lines_run_id_sequence_unique" unique ("run_id", "sequence");`);
    this.addSql(`alter table "caption_lines" add constraint "caption_lines_project_id_foreign" foreign key ("project_id") references "projects" ("id") on delete cascade;`);
    this.addSql(`alter table "caption_lines" add constraint "caption_lines_run_id_foreign" foreign key ("run_id") references "analysis_runs" ("id") on delete cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "caption_lines" cascade;`);
  }
}
