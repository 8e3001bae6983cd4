import { Migration } from '@mikro-orm/migrations';

/** A settled job keeps the events it owes until they are published, so a process dying after the commit loses none. */
export class Migration20261123180000JobOutcomeEvents extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "jobs" add "outcome_events" jsonb null;`);
    this.addSql(`create index "jobs_outcome_events_pending_index" on "jobs" ("completed_at") where "outcome_events" is not null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "jobs_outcome_events_pending_index";`);
    this.addSql(`alter table "jobs" drop column "outcome_events";`);
  }
}
