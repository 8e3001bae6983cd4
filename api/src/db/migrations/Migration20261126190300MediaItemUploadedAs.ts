import { Migration } from '@mikro-orm/migrations';

/** The file id and name an item's client uploaded, kept when its content folds onto a file stored before (issue 22). */
export class Migration20261126190300MediaItemUploadedAs extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "media_items" add "uploaded_file_id" uuid null, add "uploaded_filename" varchar(255) null;`);
    this.addSql(`create index "media_items_uploaded_file_id_index" on "media_items" ("uploaded_file_id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "media_items_uploaded_file_id_index";`);
    this.addSql(`alter table "media_items" drop column "uploaded_file_id", drop column "uploaded_filename";`);
  }
}
