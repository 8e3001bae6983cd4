import { Migration } from '@mikro-orm/migrations';

/** Identical content is stored once: at most one UPLOADED file per sha256. */
export class Migration20261121190000ContentAddressed extends Migration {
  override async up(): Promise<void> {
    // twins the completion race already made would block the index: fold their items onto the oldest, as the completion does
    // (their objects stay in the store; a migration cannot reach it)
    const duplicates = `select id, first_value(id) over (partition by sha256_hash order by created_at, id) as keeper
      from media_files where status = 'UPLOADED' and sha256_hash is not null`;
    this.addSql(`update media_items set media_file_id = d.keeper from (${duplicates}) d where media_items.media_file_id = d.id and d.id <> d.keeper;`);
    this.addSql(`delete from media_files using (${duplicates}) d where media_files.id = d.id and d.id <> d.keeper;`);
    this.addSql(`create unique index "media_files_sha256_hash_uploaded_unique" on "media_files" ("sha256_hash") where "status" = 'UPLOADED';`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "media_files_sha256_hash_uploaded_unique";`);
  }
}
