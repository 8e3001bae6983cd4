import { randomUUID } from 'node:crypto';
import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import type { AnalyzeSettings, AnalyzeSource } from '../../../crds/contract/programs/analyze.ts';
import type { BillingService } from '../billing/billing-service.ts';
import { roundMinutes } from '../billing/tiers.ts';
import { spineOf } from '../canvases/spine.ts';
import { assertNoFailedSource, projectTimeline } from '../timeline/project-timeline.ts';
import { InvalidInput, Conflict, Invalid, LimitReached, NotFound } from '../shared/errors.ts';
import { AnalysisPreset } from '../presets/entities.ts';
import type { AnalyzeRequest } from './schemas.ts';
import type { JobService } from '../jobs/service.ts';
import { Project, type ProjectRow } from '../projects/entities.ts';
import type { ProjectService } from '../projects/service.ts';
import type { Announcer } from '../events/announcer.ts';
import { AnalysisRun, type AnalysisRunRow } from './entities.ts';

/**
 * What the analysis runs with: the request's fields, and those it leaves out from the
 * caller's preset named by preset_id (404 for a missing or another user's preset). The
 * preset's audio_clean and censorship_mode are export settings, not the analysis's.
 */
async function settingsOf(em: EntityManager, userId: string, request: AnalyzeRequest): Promise<AnalyzeSettings> {
  const { preset_id: presetId, ...given } = request;
  const preset = presetId ? await em.findOne(AnalysisPreset, { id: presetId, userId }) : null;
  if (presetId && !preset) throw NotFound('preset.not_found');
  const notes = given.director_notes ?? (preset?.directorNotes || undefined);
  return {
    pacing_level: given.pacing_level ?? preset?.pacingLevel ?? 50,
    false_start_sensitivity: given.false_start_sensitivity ?? preset?.falseStartSensitivity ?? 50,
    language: given.language !== undefined ? given.language : (preset?.language ?? null),
    analysis_mode: given.analysis_mode,
    ...(notes !== undefined ? { director_notes: notes } : {}),
  };
}

/** Credits are counted in tenths of a minute: the least an analysis with audio costs. */
const SMALLEST_CHARGE_MINUTES = 0.1;

export interface AnalysisDeps {
  jobs: JobService;
  billing: BillingService;
  projects: ProjectService;
  /** Sends analysis_started (and its webhook, recorded with the run and the job) once the analyze commits. */
  announcer?: Pick<Announcer, 'announce'>;
}

/** What analyzing a project would take: its spine's sources and the AI minutes of their audio. */
export interface AnalysisPlan {
  sources: AnalyzeSource[];
  minutes: number;
}

/**
 * Analysis of a project: requests (credits reserved with the job, in one transaction),
 * estimates, runs and their activation. The pipeline itself is the `analyze` program;
 * its completion (analysis/completion.ts) records what it found.
 */
export class AnalysisService {
  readonly #d: AnalysisDeps;

  constructor(deps: AnalysisDeps) {
    this.#d = deps;
  }

  /**
   * The spine as the program reads it. 400 without media; 409 while a source is still
   * processing (its audio is not there yet); 422 when no source has audio.
   */
  async plan(em: EntityManager, projectId: string): Promise<AnalysisPlan> {
    const spine = await spineOf(em, projectId);
    if (spine.length === 0) throw InvalidInput('analysis.no_media');
    const files = spine.map(({ fill }) => ({ item: fill.item, file: fill.item.file }));
    // where each source starts on the timeline (INSERT canvases between sources take their time)
    const timeline = await projectTimeline(em, projectId);
    assertNoFailedSource(timeline);
    if (files.some(({ file }) => file.status !== 'UPLOADED')) throw Conflict('analysis.source_processing');
    if (!files.some(({ file }) => file.hasAudio)) throw Invalid('analysis.silent_sources');
    const pieces = new Map(timeline.pieces.map((piece) => [piece.canvasId, piece]));
    const sources = spine.map(({ canvas, fill }): AnalyzeSource => {
      const piece = pieces.get(canvas.id);
      return {
        media_file_id: fill.item.file.id,
        media_item_id: fill.item.id,
        audio_key: fill.item.file.hasAudio ? fill.item.file.audioKey ?? null : null,
        // a split clip is analysed for the stretch it plays
        duration_ms: piece?.durationMs ?? fill.item.file.durationMs ?? 0,
        timeline_offset_ms: piece?.timelineStartMs ?? 0,
        source_start_ms: piece?.sourceStartMs ?? 0,
      };
    });
    const audioMs = sources.filter((source) => source.audio_key).reduce((sum, source) => sum + source.duration_ms, 0);
    // Some source has audio (checked above), so the analysis transcribes something: never free,
    // whatever length a container declares.
    return { sources, minutes: Math.max(SMALLEST_CHARGE_MINUTES, roundMinutes(audioMs / 60_000)) };
  }

  async estimate(em: EntityManager, userId: string, projectId: string) {
    await this.#d.projects.owned(em, userId, projectId);
    const { minutes } = await this.plan(em, projectId);
    const { balance, reserved, available } = await this.#d.billing.creditsOf(em, userId);
    // balance and reserved as the billing status shows them; available is what an analysis may use now
    return { estimated_minutes: minutes, balance, reserved, available: Math.max(0, available), sufficient: available >= minutes };
  }

  /**
   * Queues an analysis: the run, the job and its credit reservation are written with the
   * project's move to `analyzing`, in one transaction; 402 (insufficient credits) and 409
   * (already analyzing) leave nothing behind.
   */
  async analyze(em: EntityManager, userId: string, projectId: string, request: AnalyzeRequest): Promise<{ project: ProjectRow; run: AnalysisRunRow }> {
    await this.#d.projects.owned(em, userId, projectId);
    const settings = await settingsOf(em, userId, request);
    // director notes steer the transcription (the recognizer's prompt): a plan feature, refused rather than silently ignored
    if (settings.director_notes?.trim() && !(await this.#d.billing.limitsOf(em, userId)).canUseAiDirector) {
      throw LimitReached('analysis.director_not_included', { code: 'AiDirectorNotIncluded' });
    }
    const queued = await em.transactional(async (tx) => {
      const project = await tx.findOneOrFail(Project, projectId, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
      if (project.status === 'analyzing') throw Conflict('analysis.already_analyzing');
      const { sources, minutes } = await this.plan(tx, projectId);
      const run = tx.create(AnalysisRun, {
        id: randomUUID(),
        project,
        userId,
        status: 'queued',
        pacingLevel: settings.pacing_level,
        falseStartSensitivity: settings.false_start_sensitivity,
        language: settings.language,
        analysisMode: settings.analysis_mode,
        directorNotes: settings.director_notes ?? null,
        creditsReserved: minutes,
      });
      await tx.flush();
      const job = await this.#d.jobs.submit(tx, {
        program: 'analyze',
        userId,
        projectId,
        subjectId: run.id,
        input: { settings, sources },
        creditMinutes: minutes,
      });
      run.jobId = job.id;
      project.status = 'analyzing';
      await tx.flush();
      const started = { type: 'analysis_started' as const, data: { project_uuid: projectId, analysis_run_id: run.id } };
      const announce = await this.#d.announcer?.announce(tx, started.data.analysis_run_id, { to: 'project', projectId, event: started });
      return { project, run, announce };
    });
    await queued.announce?.();
    return { project: queued.project, run: queued.run };
  }

  async runs(em: EntityManager, userId: string, projectId: string, limit: number): Promise<AnalysisRunRow[]> {
    await this.#d.projects.owned(em, userId, projectId);
    return em.find(AnalysisRun, { project: projectId }, { orderBy: { createdAt: 'desc', id: 'desc' }, limit });
  }

  /**
   * Stops a queued or running analysis: its job is cancelled (a job not handed over yet is
   * settled here; a running one is stopped by its backend and settled as it ends), which
   * fails the run, releases its minutes once and announces analysis_failed. 404 for a run
   * not of this project, 409 once it has ended. Returns the run as it is now.
   */
  async cancel(em: EntityManager, userId: string, projectId: string, runId: string): Promise<AnalysisRunRow> {
    await this.#d.projects.owned(em, userId, projectId);
    const run = await em.findOne(AnalysisRun, { id: runId, project: projectId });
    if (!run) throw NotFound('analysis.run_not_found');
    if (run.status !== 'queued' && run.status !== 'running') throw Conflict('analysis.run_not_running', { params: { status: run.status } });
    if (run.jobId) await this.#d.jobs.cancel(em, run.jobId);
    return em.fork().findOneOrFail(AnalysisRun, run.id);
  }

  /** Makes a completed run the active one and copies its transcript to the project (422 otherwise). */
  async activate(em: EntityManager, userId: string, projectId: string, runId: string): Promise<ProjectRow> {
    await this.#d.projects.owned(em, userId, projectId);
    return em.transactional(async (tx) => {
      const project = await tx.findOneOrFail(Project, projectId, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
      const run = await tx.findOne(AnalysisRun, { id: runId });
      if (!run || run.project.id !== projectId) throw Invalid('analysis.run_of_another_project');
      if (run.status !== 'completed') throw Invalid('analysis.run_not_completed', { params: { status: run.status } });
      project.activeRunId = run.id;
      project.transcript = run.transcript ?? null;
      await tx.flush();
      return project;
    });
  }

}
