import { Migration } from '@mikro-orm/migrations';

/** A job may wait for a media file to settle before the outbox hands it over (a media edit of a file still processing). */
export class Migration20261123160000JobsWaitForFile extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "jobs" add "waits_for_file_id" uuid null;`);
    this.addSql(`create index "jobs_waits_for_file_id_index" on "jobs" ("waits_for_file_id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "jobs_waits_for_file_id_index";`);
    this.addSql(`alter table "jobs" drop column "waits_for_file_id";`);
  }
}
