import { expect } from 'chai';
import { violationsOf, type ChaosState, type ViolationRule } from '../../bench/chaos/invariants.ts';

const USER = 'u1';
const PROJECT = 'p1';

/** A settled world that breaks no rule: an upload ready, an analysis completed with its credits deducted, an export failed. */
function cleanState(): ChaosState {
  return {
    jobs: [
      { id: 'j-artifact', program: 'artifact', status: 'succeeded', completed: true, creditMinutes: null },
      { id: 'j-analyze', program: 'analyze', status: 'succeeded', completed: true, creditMinutes: 0.5 },
      { id: 'j-analyze-2', program: 'analyze', status: 'failed', completed: true, creditMinutes: 0.3 },
      { id: 'j-render', program: 'render', status: 'failed', completed: true, creditMinutes: null },
    ],
    files: [
      { id: 'f1', status: 'UPLOADED', sizeBytes: 1000, storageKey: 'media/f1/source', proxyStatus: 'not_applicable', storedBytes: 1000 },
      { id: 'f2', status: 'FAILED', sizeBytes: 400, storageKey: 'media/f2/source', proxyStatus: 'unknown', storedBytes: null },
      { id: 'f3', status: 'PENDING', sizeBytes: null, storageKey: 'media/f3/source', proxyStatus: 'unknown', storedBytes: null },
    ],
    items: [
      { id: 'i1', userId: USER, fileId: 'f1', chargedBytes: 1000, pendingFileId: null },
      { id: 'i2', userId: USER, fileId: 'f2', chargedBytes: 400, pendingFileId: null },
      { id: 'i3', userId: USER, fileId: 'f3', chargedBytes: 0, pendingFileId: null },
    ],
    users: [{ id: USER, storageUsedBytes: 1400 }],
    credits: [
      { userId: USER, kind: 'grant', minutes: 100, reference: 'chaos-grant' },
      { userId: USER, kind: 'reserve', minutes: 0.5, reference: 'job:j-analyze' },
      { userId: USER, kind: 'deduct', minutes: 0.5, reference: 'job:j-analyze' },
      { userId: USER, kind: 'reserve', minutes: 0.3, reference: 'job:j-analyze-2' },
      { userId: USER, kind: 'release', minutes: 0.3, reference: 'job:j-analyze-2' },
    ],
    runs: [
      { id: 'r1', projectId: PROJECT, status: 'completed' },
      { id: 'r2', projectId: PROJECT, status: 'failed' },
    ],
    exports: [{ id: 'e1', projectId: PROJECT, status: 'failed' }],
    projects: [{ id: PROJECT, status: 'analyzed' }],
    confirmedFileIds: ['f1', 'f2'],
    events: [
      { owner: USER, type: 'media_ready', data: { media_item_uuid: 'i1', media_file_uuid: 'f1' } },
      { owner: USER, type: 'media_failed', data: { media_item_uuid: 'i2', media_file_uuid: 'f2' } },
      { owner: PROJECT, type: 'analysis_complete', data: { project_uuid: PROJECT } },
      { owner: PROJECT, type: 'analysis_failed', data: { project_uuid: PROJECT } },
      { owner: PROJECT, type: 'export_failed', data: { export_uuid: 'e1' } },
    ],
  };
}

/** The rules a planted fault breaks, each once per subject it touches. */
function rulesBroken(plant: (state: ChaosState) => void): ViolationRule[] {
  const state = cleanState();
  plant(state);
  return violationsOf(state).map((violation) => violation.rule);
}

describe('chaos invariants: the checker catches each planted violation', () => {
  it('a settled world breaks no rule (an unconfirmed PENDING upload is abandoned, not stuck)', () => {
    expect(violationsOf(cleanState())).to.deep.equal([]);
  });

  it('a job never completed, or completed still running → stuck_jobs', () => {
    expect(rulesBroken((s) => Object.assign(s.jobs[0]!, { completed: false, status: 'running' }))).to.deep.equal(['stuck_jobs']);
    expect(rulesBroken((s) => Object.assign(s.jobs[3]!, { status: 'running' }))).to.deep.equal(['stuck_jobs']);
  });

  it('a file PROCESSING, a confirmed upload still PENDING, a proxy left pending, an export rendering, a run running, a project analyzing → stuck_records', () => {
    // the PROCESSING file's item expects no event yet, so only the record is stuck
    expect(rulesBroken((s) => (s.files[0]!.status = 'PROCESSING'))).to.deep.equal(['stuck_records']);
    expect(rulesBroken((s) => s.confirmedFileIds.push('f3'))).to.deep.equal(['stuck_records']);
    expect(rulesBroken((s) => (s.files[0]!.proxyStatus = 'pending'))).to.deep.equal(['stuck_records']);
    expect(rulesBroken((s) => (s.exports[0]!.status = 'rendering'))).to.deep.equal(['stuck_records']);
    expect(rulesBroken((s) => s.runs.push({ id: 'r3', projectId: PROJECT, status: 'running' }))).to.deep.equal(['stuck_records']);
    expect(rulesBroken((s) => (s.projects[0]!.status = 'analyzing'))).to.deep.equal(['stuck_records']);
  });

  it('storage_used_bytes off the sum of charges, an item charged other than its file size, an object missing or of another size → storage_mismatches', () => {
    expect(rulesBroken((s) => (s.users[0]!.storageUsedBytes = 2400))).to.deep.equal(['storage_mismatches']);
    expect(rulesBroken((s) => {
      s.items[0]!.chargedBytes = 2000;
      s.users[0]!.storageUsedBytes = 2400;
    })).to.deep.equal(['storage_mismatches']);
    expect(rulesBroken((s) => (s.files[0]!.storedBytes = null))).to.deep.equal(['storage_mismatches']);
    expect(rulesBroken((s) => (s.files[0]!.storedBytes = 999))).to.deep.equal(['storage_mismatches']);
  });

  it('a reservation settled twice, never settled, settled the wrong way or for more than reserved, or a settlement without a reservation → ledger_mismatches', () => {
    expect(rulesBroken((s) => s.credits.push({ userId: USER, kind: 'release', minutes: 0.5, reference: 'job:j-analyze' }))).to.deep.equal(['ledger_mismatches']);
    expect(rulesBroken((s) => (s.credits = s.credits.filter((entry) => entry.kind !== 'deduct')))).to.deep.equal(['ledger_mismatches']);
    expect(rulesBroken((s) => (s.credits.find((entry) => entry.kind === 'release')!.kind = 'deduct'))).to.deep.equal(['ledger_mismatches']);
    expect(rulesBroken((s) => (s.credits.find((entry) => entry.kind === 'deduct')!.minutes = 0.6))).to.deep.equal(['ledger_mismatches']);
    expect(rulesBroken((s) => s.credits.push({ userId: USER, kind: 'deduct', minutes: 1, reference: 'job:nobody' }))).to.deep.equal(['ledger_mismatches']);
    expect(rulesBroken((s) => (s.credits = s.credits.filter((entry) => entry.reference !== 'job:j-analyze')))).to.deep.equal(['ledger_mismatches', 'ledger_mismatches']);
  });

  it('an outcome event lost → missing_events; heard twice → duplicate_events; the opposite outcome heard → contradicting_events', () => {
    expect(rulesBroken((s) => s.events.splice(0, 1))).to.deep.equal(['missing_events']);
    expect(rulesBroken((s) => s.events.push({ ...s.events[0]! }))).to.deep.equal(['duplicate_events']);
    expect(rulesBroken((s) => s.events.push({ owner: USER, type: 'media_failed', data: { media_item_uuid: 'i1' } }))).to.deep.equal(['contradicting_events']);
    expect(rulesBroken((s) => (s.events = s.events.filter((event) => event.type !== 'export_failed')))).to.deep.equal(['missing_events']);
    expect(rulesBroken((s) => s.events.push({ owner: PROJECT, type: 'export_complete', data: { export_uuid: 'e1' } }))).to.deep.equal(['contradicting_events']);
    expect(rulesBroken((s) => s.events.push({ owner: PROJECT, type: 'analysis_complete', data: {} }))).to.deep.equal(['duplicate_events']);
    expect(rulesBroken((s) => (s.events = s.events.filter((event) => event.type !== 'analysis_failed')))).to.deep.equal(['missing_events']);
  });

  it("another user's or project's event does not count for this one", () => {
    expect(rulesBroken((s) => (s.events[0]!.owner = 'someone-else'))).to.deep.equal(['missing_events']);
    expect(rulesBroken((s) => (s.events[4]!.owner = 'another-project'))).to.deep.equal(['missing_events']);
  });
});
