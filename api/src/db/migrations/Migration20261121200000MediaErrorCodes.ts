import { Migration } from '@mikro-orm/migrations';

/** A failed file's stable error code and params, translated when shown; `error` stays the English fallback. */
export class Migration20261121200000MediaErrorCodes extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "media_files" add "error_code" varchar(64) null, add "error_params" jsonb null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "media_files" drop column "error_params", drop column "error_code";`);
  }
}
