import { Migration } from '@mikro-orm/migrations';

/**
 * Clients write to a staging key of their upload, never to the object the service serves;
 * an item being replaced by a media edit names the file it will be repointed at.
 */
export class Migration20261122110000MediaHardening extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "media_files" add "upload_key" varchar(1024) null;`);
    this.addSql(`create index "media_files_upload_key_index" on "media_files" ("upload_key");`);
    // uploads started before this change were handed URLs of their storage key: that is their staging key
    this.addSql(`update "media_files" set "upload_key" = "storage_key" where "status" in ('PENDING', 'MULTIPART_INITIATED');`);
    this.addSql(`alter table "media_items" add "pending_file_id" uuid null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "media_items" drop column "pending_file_id";`);
    this.addSql(`drop index if exists "media_files_upload_key_index";`);
    this.addSql(`alter table "media_files" drop column "upload_key";`);
  }
}
