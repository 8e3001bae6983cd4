/**
 * What must hold once a chaos campaign has quiesced, read from PostgreSQL, S3 and the
 * outcome events heard on Redis. `collectState` reads; `violationsOf` judges, as a pure
 * function of the state, so a test can plant each kind of violation and see it caught.
 *
 *   stuck_jobs          every job completed (succeeded or failed)
 *   stuck_records       media files UPLOADED or FAILED (a PENDING one only if its upload was never
 *                       confirmed), no proxy left pending, exports and analysis runs ended, no project analyzing
 *   storage_mismatches  users.storage_used_bytes = Σ media_items.charged_bytes of the user's items;
 *                       an item of an UPLOADED file is charged the file's size; the object is stored with that size
 *   ledger_mismatches   every job reservation settled exactly once (deduct if it succeeded, release
 *                       if not, never more than reserved); no settlement without a reservation
 *   missing_events, duplicate_events, contradicting_events
 *                       one media_ready (UPLOADED) or media_failed (FAILED) per media item; per export
 *                       one export_complete or export_failed; per project as many analysis_complete and
 *                       analysis_failed as it has completed and failed runs
 */
import pg from 'pg';
import type { ObjectStorage } from '../../api/src/storage/storage.ts';
import type { HeardEvent } from './outcome-events.ts';

export interface JobState {
  id: string;
  program: string;
  status: string;
  completed: boolean;
  creditMinutes: number | null;
}
export interface FileState {
  id: string;
  status: string;
  sizeBytes: number | null;
  storageKey: string;
  proxyStatus: string;
  /** The size of the object at storageKey, null when there is none (read for UPLOADED files only). */
  storedBytes: number | null;
}
export interface ItemState {
  id: string;
  userId: string;
  fileId: string;
  chargedBytes: number;
  pendingFileId: string | null;
}
export interface CreditEntryState {
  userId: string;
  kind: string;
  minutes: number;
  reference: string;
}

export interface ChaosState {
  jobs: JobState[];
  files: FileState[];
  items: ItemState[];
  users: { id: string; storageUsedBytes: number }[];
  credits: CreditEntryState[];
  runs: { id: string; projectId: string; status: string }[];
  exports: { id: string; projectId: string; status: string }[];
  projects: { id: string; status: string }[];
  /** Files whose upload the client saw confirmed (a PENDING one of these is stuck, not abandoned). */
  confirmedFileIds: string[];
  events: HeardEvent[];
}

export const violationRules = ['stuck_jobs', 'stuck_records', 'storage_mismatches', 'ledger_mismatches', 'missing_events', 'duplicate_events', 'contradicting_events'] as const;
export type ViolationRule = (typeof violationRules)[number];

export interface Violation {
  rule: ViolationRule;
  subject: string;
  detail: string;
}

const JOB_CREDIT_PREFIX = 'job:';

export function violationsOf(state: ChaosState): Violation[] {
  return [...jobViolations(state), ...recordViolations(state), ...storageViolations(state), ...ledgerViolations(state), ...eventViolations(state)];
}

export function countByRule(violations: readonly Violation[]): Record<ViolationRule, number> {
  const counts = Object.fromEntries(violationRules.map((rule) => [rule, 0])) as Record<ViolationRule, number>;
  for (const violation of violations) counts[violation.rule] += 1;
  return counts;
}

function jobViolations(state: ChaosState): Violation[] {
  return state.jobs.flatMap((job): Violation[] => {
    if (!job.completed) return [{ rule: 'stuck_jobs', subject: `job ${job.id} (${job.program})`, detail: `never completed; status ${job.status}` }];
    if (job.status !== 'succeeded' && job.status !== 'failed') return [{ rule: 'stuck_jobs', subject: `job ${job.id} (${job.program})`, detail: `completed with status ${job.status}` }];
    return [];
  });
}

function recordViolations(state: ChaosState): Violation[] {
  const confirmed = new Set(state.confirmedFileIds);
  const stuck = (subject: string, detail: string): Violation => ({ rule: 'stuck_records', subject, detail });
  return [
    ...state.files.flatMap((file) => {
      if (file.status === 'PENDING' || file.status === 'MULTIPART_INITIATED') return confirmed.has(file.id) ? [stuck(`file ${file.id}`, `${file.status} after its upload was confirmed`)] : [];
      if (file.status !== 'UPLOADED' && file.status !== 'FAILED') return [stuck(`file ${file.id}`, `status ${file.status}`)];
      if (file.status === 'UPLOADED' && file.proxyStatus === 'pending') return [stuck(`file ${file.id}`, 'UPLOADED with its proxy still pending')];
      return [];
    }),
    ...state.items.filter((item) => item.pendingFileId !== null).map((item) => stuck(`item ${item.id}`, `still waiting for file ${item.pendingFileId}`)),
    ...state.exports.filter((row) => row.status !== 'completed' && row.status !== 'failed').map((row) => stuck(`export ${row.id}`, `status ${row.status}`)),
    ...state.runs.filter((run) => run.status !== 'completed' && run.status !== 'failed').map((run) => stuck(`analysis run ${run.id}`, `status ${run.status}`)),
    ...state.projects.filter((project) => project.status === 'analyzing').map((project) => stuck(`project ${project.id}`, 'still analyzing')),
  ];
}

function storageViolations(state: ChaosState): Violation[] {
  const files = new Map(state.files.map((file) => [file.id, file]));
  const charged = new Map<string, number>();
  for (const item of state.items) charged.set(item.userId, (charged.get(item.userId) ?? 0) + item.chargedBytes);
  const mismatch = (subject: string, detail: string): Violation => ({ rule: 'storage_mismatches', subject, detail });
  return [
    ...state.users.flatMap((user) => {
      const sum = charged.get(user.id) ?? 0;
      return user.storageUsedBytes === sum ? [] : [mismatch(`user ${user.id}`, `storage_used_bytes ${user.storageUsedBytes}, items charged ${sum}`)];
    }),
    ...state.items.flatMap((item) => {
      const file = files.get(item.fileId);
      if (file?.status !== 'UPLOADED' || item.chargedBytes === file.sizeBytes) return [];
      return [mismatch(`item ${item.id}`, `charged ${item.chargedBytes}, its UPLOADED file holds ${file.sizeBytes} bytes`)];
    }),
    ...state.files.flatMap((file) => {
      if (file.status !== 'UPLOADED' || file.storedBytes === file.sizeBytes) return [];
      return [mismatch(`file ${file.id}`, file.storedBytes === null ? `no object at ${file.storageKey}` : `object of ${file.storedBytes} bytes, row says ${file.sizeBytes}`)];
    }),
  ];
}

function ledgerViolations(state: ChaosState): Violation[] {
  const mismatch = (subject: string, detail: string): Violation => ({ rule: 'ledger_mismatches', subject, detail });
  const byReference = new Map<string, CreditEntryState[]>();
  for (const entry of state.credits) {
    if (!entry.reference.startsWith(JOB_CREDIT_PREFIX)) continue;
    byReference.set(entry.reference, [...(byReference.get(entry.reference) ?? []), entry]);
  }
  const violations: Violation[] = [];
  for (const job of state.jobs) {
    if (job.creditMinutes === null) continue;
    const reference = `${JOB_CREDIT_PREFIX}${job.id}`;
    const entries = byReference.get(reference) ?? [];
    byReference.delete(reference);
    const reserves = entries.filter((entry) => entry.kind === 'reserve');
    const settlements = entries.filter((entry) => entry.kind === 'deduct' || entry.kind === 'release');
    const subject = `credits of job ${job.id} (${job.program})`;
    if (reserves.length !== 1) violations.push(mismatch(subject, `${reserves.length} reservations`));
    if (!job.completed) continue; // a stuck job is counted once, as stuck
    if (settlements.length !== 1) {
      violations.push(mismatch(subject, `${settlements.length} settlements (${settlements.map((entry) => entry.kind).join(', ') || 'none'})`));
      continue;
    }
    const [settlement] = settlements as [CreditEntryState];
    const expected = job.status === 'succeeded' ? 'deduct' : 'release';
    if (settlement.kind !== expected) violations.push(mismatch(subject, `${job.status} job settled by ${settlement.kind}`));
    const reserved = reserves[0]?.minutes ?? 0;
    if (settlement.kind === 'deduct' && settlement.minutes > reserved) violations.push(mismatch(subject, `deducted ${settlement.minutes} of ${reserved} reserved`));
    if (settlement.kind === 'release' && settlement.minutes !== reserved) violations.push(mismatch(subject, `released ${settlement.minutes} of ${reserved} reserved`));
  }
  for (const [reference, entries] of byReference) violations.push(mismatch(reference, `${entries.map((entry) => entry.kind).join(', ')} for no job that reserved credits`));
  return violations;
}

function eventViolations(state: ChaosState): Violation[] {
  const violations: Violation[] = [];
  /** Judges one subject: exactly one event of the expected type, none of the contrary one. */
  const judge = (subject: string, expected: number, heard: number, contrary: number) => {
    if (heard < expected) violations.push({ rule: 'missing_events', subject, detail: `${heard} of ${expected} heard` });
    if (heard > expected) violations.push({ rule: 'duplicate_events', subject, detail: `${heard} heard, ${expected} expected` });
    if (contrary > 0) violations.push({ rule: 'contradicting_events', subject, detail: `${contrary} event(s) saying the opposite` });
  };
  const count = (type: string, matches: (event: HeardEvent) => boolean) => state.events.filter((event) => event.type === type && matches(event)).length;

  const files = new Map(state.files.map((file) => [file.id, file]));
  for (const item of state.items) {
    const status = files.get(item.fileId)?.status;
    if (status !== 'UPLOADED' && status !== 'FAILED') continue;
    const ofItem = (event: HeardEvent) => event.owner === item.userId && event.data.media_item_uuid === item.id;
    const [wanted, contrary] = status === 'UPLOADED' ? ['media_ready', 'media_failed'] : ['media_failed', 'media_ready'];
    judge(`${wanted} of item ${item.id}`, 1, count(wanted, ofItem), count(contrary, ofItem));
  }
  for (const row of state.exports) {
    if (row.status !== 'completed' && row.status !== 'failed') continue;
    const ofExport = (event: HeardEvent) => event.owner === row.projectId && event.data.export_uuid === row.id;
    const [wanted, contrary] = row.status === 'completed' ? ['export_complete', 'export_failed'] : ['export_failed', 'export_complete'];
    judge(`${wanted} of export ${row.id}`, 1, count(wanted, ofExport), count(contrary, ofExport));
  }
  const projectIds = new Set([...state.runs.map((run) => run.projectId), ...state.events.filter((event) => event.type.startsWith('analysis_')).map((event) => event.owner)]);
  for (const projectId of projectIds) {
    const runs = state.runs.filter((run) => run.projectId === projectId);
    const ofProject = (event: HeardEvent) => event.owner === projectId;
    for (const [status, type] of [['completed', 'analysis_complete'], ['failed', 'analysis_failed']] as const) {
      judge(`${type} of project ${projectId}`, runs.filter((run) => run.status === status).length, count(type, ofProject), 0);
    }
  }
  return violations;
}

/** Reads the state of a campaign's database and bucket, with the events heard and the uploads the clients confirmed. */
export async function collectState(databaseUrl: string, storage: ObjectStorage, extra: Pick<ChaosState, 'events' | 'confirmedFileIds'>): Promise<ChaosState> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const rows = async <T>(sql: string) => (await client.query(sql)).rows as T[];
    const jobs = await rows<{ id: string; program: string; status: string; completed: boolean; credit_minutes: string | null }>(
      `select id, program, status, completed_at is not null as completed, credit_minutes from jobs`,
    );
    const files = await rows<{ id: string; status: string; size_bytes: string | null; storage_key: string; proxy_status: string }>(
      `select id, status, size_bytes, storage_key, proxy_status from media_files`,
    );
    const items = await rows<{ id: string; user_id: string; media_file_id: string; charged_bytes: string; pending_file_id: string | null }>(
      `select id, user_id, media_file_id, charged_bytes, pending_file_id from media_items`,
    );
    const users = await rows<{ id: string; storage_used_bytes: string }>(`select id, storage_used_bytes from users`);
    const credits = await rows<{ user_id: string; kind: string; minutes: string; reference: string }>(`select user_id, kind, minutes, reference from credit_entries`);
    const runs = await rows<{ id: string; project_id: string; status: string }>(`select id, project_id, status from analysis_runs`);
    const exports = await rows<{ id: string; project_id: string; status: string }>(`select id, project_id, status from exports`);
    const projects = await rows<{ id: string; status: string }>(`select id, status from projects`);
    const stored = await Promise.all(files.map((file) => (file.status === 'UPLOADED' ? storage.sizeOf(file.storage_key) : Promise.resolve(null))));
    return {
      jobs: jobs.map((job) => ({ id: job.id, program: job.program, status: job.status, completed: job.completed, creditMinutes: job.credit_minutes === null ? null : Number(job.credit_minutes) })),
      files: files.map((file, index) => ({
        id: file.id,
        status: file.status,
        sizeBytes: file.size_bytes === null ? null : Number(file.size_bytes),
        storageKey: file.storage_key,
        proxyStatus: file.proxy_status,
        storedBytes: stored[index] ?? null,
      })),
      items: items.map((item) => ({ id: item.id, userId: item.user_id, fileId: item.media_file_id, chargedBytes: Number(item.charged_bytes), pendingFileId: item.pending_file_id })),
      users: users.map((user) => ({ id: user.id, storageUsedBytes: Number(user.storage_used_bytes) })),
      credits: credits.map((entry) => ({ userId: entry.user_id, kind: entry.kind, minutes: Number(entry.minutes), reference: entry.reference })),
      runs: runs.map((run) => ({ id: run.id, projectId: run.project_id, status: run.status })),
      exports: exports.map((row) => ({ id: row.id, projectId: row.project_id, status: row.status })),
      projects,
      ...extra,
    };
  } finally {
    await client.end();
  }
}
