import { Migration } from '@mikro-orm/migrations';

/** A video file's keyframes as the artifact program listed them (issue 42 item 1): shortened pauses' cuts slide onto them; null for files probed before. */
export class Migration20261203100000MediaKeyframes extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "media_files" add "keyframes_ms" jsonb null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "media_files" drop column "keyframes_ms";`);
  }
}
