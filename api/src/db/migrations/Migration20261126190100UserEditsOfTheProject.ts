import { Migration } from '@mikro-orm/migrations';

/**
 * Manual and asset edits belong to the project, not to the analysis run active when they
 * were made (issue 22: a re-analysis made them vanish from the edit list and from exports).
 * Those made on a run become run-less, so every one the user made is listed again.
 */
export class Migration20261126190100UserEditsOfTheProject extends Migration {
  override async up(): Promise<void> {
    this.addSql(`update "edits" set "run_id" = null where "type" in ('manual', 'asset') and "run_id" is not null;`);
  }

  override async down(): Promise<void> {
    // which run each edit was made on is not kept: nothing to undo
  }
}
