import { Migration } from '@mikro-orm/migrations';

/** Media groups and the memberships that put library items in them. */
export class Migration20261121160000MediaGroups extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "media_groups" ("id" uuid not null, "user_id" uuid not null, "name" varchar(200) not null, "description" text null, "default_instructions" text null, "is_default" boolean not null default false, "is_pinned" boolean not null default false, "display_order" int not null default 0, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "media_groups_user_id_index" on "media_groups" ("user_id");`);
    this.addSql(`create table "media_group_memberships" ("id" uuid not null, "media_group_id" uuid not null, "media_item_id" uuid not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "media_group_memberships_media_group_id_index" on "media_group_memberships" ("media_group_id");`);
    this.addSql(`create index "media_group_memberships_media_item_id_index" on "media_group_memberships" ("media_item_id");`);
    this.addSql(`alter table "media_group_memberships" add constraint "media_group_memberships_media_group_id_media_item_id_unique" unique ("media_group_id", "media_item_id");`);
    this.addSql(`alter table "media_group_memberships" add constraint "media_group_memberships_media_group_id_foreign" foreign key ("media_group_id") references "media_groups" ("id") on delete cascade;`);
    this.addSql(`alter table "media_group_memberships" add constraint "media_group_memberships_media_item_id_foreign" foreign key ("media_item_id") references "media_items" ("id") on delete cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "media_group_memberships" cascade;`);
    this.addSql(`drop table if exists "media_groups" cascade;`);
  }
}
