import { Migration } from '@mikro-orm/migrations';

/** The file id and name an item's client uploaded, kept when its content folds onto a file stored before (issue 22). */
export class Migration20261126190300MediaItemUploadedAs extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "media_items" add "uploaded_file_id" uuid null, add "uploaded_filename" varchar(255) null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "media_items" drop column "uploaded_file_id", drop column "uploaded_filename";`);
  }
}
