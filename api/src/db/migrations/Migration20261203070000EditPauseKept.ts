import { Migration } from '@mikro-orm/migrations';

/** A shortened pause (issue 39): the pause a silence edit lies in, what of it stays, the breath it holds. */
export class Migration20261203070000EditPauseKept extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "edits" add "pause" jsonb null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "edits" drop column "pause";`);
  }
}
