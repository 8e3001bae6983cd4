import { Migration } from '@mikro-orm/migrations';

/** Uploads: what each item's owner was charged, and the index the stale multipart sweep reads. */
export class Migration20261121150000MediaUploads extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index "media_files_status_created_at_index" on "media_files" ("status", "created_at");`);
    this.addSql(`alter table "media_items" add "charged_bytes" bigint not null default '0';`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "media_items" drop column "charged_bytes";`);
    this.addSql(`drop index "media_files_status_created_at_index";`);
  }
}
