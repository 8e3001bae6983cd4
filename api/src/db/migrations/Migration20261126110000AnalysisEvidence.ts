import { Migration } from '@mikro-orm/migrations';

/**
 * How sure each AI edit is (`edits.confidence`, 0–1; null on manual and asset edits and
 * on edits of runs made before it), and why a run's analysis could not tell speech from
 * noise in some sources (`analysis_runs.weak_evidence`: their pauses were offered, not cut).
 */
export class Migration20261126110000AnalysisEvidence extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "edits" add "confidence" real null;`);
    this.addSql(`alter table "analysis_runs" add "weak_evidence" jsonb null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "edits" drop column "confidence";`);
    this.addSql(`alter table "analysis_runs" drop column "weak_evidence";`);
  }
}
