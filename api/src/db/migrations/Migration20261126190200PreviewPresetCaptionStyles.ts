import { Migration } from '@mikro-orm/migrations';

/**
 * Preview presets take the caption styles exports render (one list, issue 22); a preset
 * saved with a style no export knows shows the default style, classic, as its export would.
 */
export class Migration20261126190200PreviewPresetCaptionStyles extends Migration {
  override async up(): Promise<void> {
    this.addSql(`update "preview_presets" set "caption_style" = 'classic' where "caption_style" not in ('classic', 'bold', 'boxed', 'highlight', 'karaoke');`);
  }

  override async down(): Promise<void> {
    // the former free-text styles are not kept: nothing to undo
  }
}
