import { Migration } from '@mikro-orm/migrations';

/**
 * Images processed before stills had a duration kept duration_ms null, which froze their
 * projects' timelines (issue 22): they get the default still duration (IMAGE_STILL_DURATION_MS's
 * default, 5000 ms), as images processed from now on do.
 */
export class Migration20261126190000ImageStillDuration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`update "media_files" set "duration_ms" = 5000 where "kind" = 'image' and "status" = 'UPLOADED' and "duration_ms" is null;`);
  }

  override async down(): Promise<void> {
    // the durations written are indistinguishable from those recorded since; nothing to undo
  }
}
