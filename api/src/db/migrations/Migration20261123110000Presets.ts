import { Migration } from '@mikro-orm/migrations';

/** Analysis presets (at most 5 per user, one default) and preview presets. */
export class Migration20261123110000Presets extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "analysis_presets" ("id" uuid not null, "user_id" uuid not null, "name" varchar(200) not null, "pacing_level" int not null, "false_start_sensitivity" int not null, "language" varchar(2) null, "audio_clean" boolean not null default false, "censorship_mode" text not null default 'none', "director_notes" text not null default '', "is_default" boolean not null default false, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "analysis_presets_user_id_index" on "analysis_presets" ("user_id");`);
    this.addSql(`alter table "analysis_presets" add constraint "analysis_presets_censorship_mode_check" check ("censorship_mode" in ('none', 'mute', 'bleep'));`);
    this.addSql(`create table "preview_presets" ("id" uuid not null, "user_id" uuid not null, "name" varchar(200) not null, "format" text not null, "background" varchar(7) not null, "caption_style" varchar(100) not null, "caption_font" varchar(100) not null, "caption_size" int not null, "caption_position" text not null, "caption_color" varchar(7) not null, "caption_length" int not null, "video_flip_h" boolean not null default false, "video_flip_v" boolean not null default false, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "preview_presets_user_id_index" on "preview_presets" ("user_id");`);
    this.addSql(`alter table "preview_presets" add constraint "preview_presets_format_check" check ("format" in ('16:9', '9:16', '1:1'));`);
    this.addSql(`alter table "preview_presets" add constraint "preview_presets_caption_position_check" check ("caption_position" in ('top', 'middle', 'bottom'));`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "preview_presets" cascade;`);
    this.addSql(`drop table if exists "analysis_presets" cascade;`);
  }
}
