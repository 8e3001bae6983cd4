import { Migration } from '@mikro-orm/migrations';

/** One live (non-FAILED) file per external video, so concurrent imports dedupe in the database. */
export class Migration20261121180000ImportDedupe extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create unique index "media_files_external_video_id_live_unique" on "media_files" ("external_video_id") where "status" <> 'FAILED';`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "media_files_external_video_id_live_unique";`);
  }
}
