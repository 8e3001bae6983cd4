import { Migration } from '@mikro-orm/migrations';

/** API keys (issue 24): only each key's SHA-256 is stored; a key goes with its user. */
export class Migration20261126150000ApiKeys extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "api_keys" ("id" uuid not null, "user_id" uuid not null, "name" varchar(100) not null, "prefix" varchar(32) not null, "key_hash" varchar(64) not null, "scopes" text[] not null, "created_at" timestamptz not null, "last_used_at" timestamptz null, "expires_at" timestamptz null, "revoked_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "api_keys_user_id_index" on "api_keys" ("user_id");`);
    this.addSql(`alter table "api_keys" add constraint "api_keys_key_hash_unique" unique ("key_hash");`);
    this.addSql(`alter table "api_keys" add constraint "api_keys_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "api_keys" cascade;`);
  }
}
