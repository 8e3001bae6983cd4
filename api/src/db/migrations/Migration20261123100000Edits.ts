import { Migration } from '@mikro-orm/migrations';

/** Asset edits' columns (overlay, audio, asset offset) in place of the unused `overlay` json. */
export class Migration20261123100000Edits extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "edits" drop column "overlay";`);
    this.addSql(`alter table "edits" add "overlay_position" varchar(16) null, add "overlay_size_percent" smallint null, add "overlay_opacity_percent" smallint null, add "overlay_x" real null, add "overlay_y" real null, add "overlay_flip_h" boolean null, add "overlay_flip_v" boolean null, add "overlay_rotation_deg" smallint null, add "audio_volume_percent" smallint null, add "audio_duck_main" boolean null, add "asset_offset_ms" int null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "edits" drop column "overlay_position", drop column "overlay_size_percent", drop column "overlay_opacity_percent", drop column "overlay_x", drop column "overlay_y", drop column "overlay_flip_h", drop column "overlay_flip_v", drop column "overlay_rotation_deg", drop column "audio_volume_percent", drop column "audio_duck_main", drop column "asset_offset_ms";`);
    this.addSql(`alter table "edits" add "overlay" jsonb null;`);
  }
}
