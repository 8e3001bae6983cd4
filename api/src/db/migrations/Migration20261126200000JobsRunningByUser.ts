import { Migration } from '@mikro-orm/migrations';

/** The outbox's per-user rule (one running job per user and kind) looks up a user's dispatched, unsettled jobs. */
export class Migration20261126200000JobsRunningByUser extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index "jobs_running_by_user_index" on "jobs" ("user_id", "kind") where "dispatched_at" is not null and "completed_at" is null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "jobs_running_by_user_index";`);
  }
}
