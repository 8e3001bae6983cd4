import { Migration } from '@mikro-orm/migrations';

/**
 * A job knows what it is for in a column of its own (the export a render makes, the run an
 * analysis fills, the item a replace repoints), no longer inside the program's input; and
 * the program's estimate of the time left is a number of its own, no longer inside `step`.
 */
export class Migration20261126100000JobSubjects extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "jobs" add "subject_id" uuid null, add "eta_seconds" int null;`);
    this.addSql(`update "jobs" set "subject_id" = case "program"
        when 'render' then ("input"->>'export_id')::uuid
        when 'analyze' then ("input"->>'run_id')::uuid
        when 'media-edit' then ("input"->>'replaceItemId')::uuid
      end
      where "program" in ('render', 'analyze', 'media-edit');`);
    this.addSql(`update "jobs" set "input" = "input" - 'export_id' - 'run_id' - 'replaceItemId' where "program" in ('render', 'analyze', 'media-edit');`);
    this.addSql(`create index "jobs_subject_id_index" on "jobs" ("subject_id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`update "jobs" set "input" = "input" || jsonb_build_object(case "program" when 'render' then 'export_id' when 'analyze' then 'run_id' else 'replaceItemId' end, "subject_id")
      where "subject_id" is not null and "program" in ('render', 'analyze', 'media-edit');`);
    this.addSql(`drop index if exists "jobs_subject_id_index";`);
    this.addSql(`alter table "jobs" drop column "subject_id", drop column "eta_seconds";`);
  }
}
