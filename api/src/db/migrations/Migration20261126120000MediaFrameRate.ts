import { Migration } from '@mikro-orm/migrations';

/** A video file's base frame rate as the artifact program probed it, kept as a rational (timeline exports cut on its frame grid). */
export class Migration20261126120000MediaFrameRate extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "media_files" add "frame_rate_num" int null, add "frame_rate_den" int null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "media_files" drop column "frame_rate_num", drop column "frame_rate_den";`);
  }
}
