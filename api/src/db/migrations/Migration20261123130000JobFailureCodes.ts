import { Migration } from '@mikro-orm/migrations';

/** Every failed job keeps its failure's stable code and params, whatever it was for. */
export class Migration20261123130000JobFailureCodes extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "jobs" add "error_code" varchar(128) null, add "error_params" jsonb null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "jobs" drop column "error_code", drop column "error_params";`);
  }
}
