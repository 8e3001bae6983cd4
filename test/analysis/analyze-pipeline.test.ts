import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { startTestApp, json, type TestApp } from '../support/harness.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';
import { uploadMedia } from '../support/media-upload.ts';
import { fileWhen } from '../support/wait.ts';
import { dataOf, isAnyEvent, isEvent, openSse } from '../support/sse-stream.ts';
import { translate } from '../../api/src/i18n/index.ts';
import { AnalysisRun } from '../../api/src/analysis/entities.ts';
import { makeVideo } from '../support/media.ts';
import { withPinkNoise } from '../support/noise.ts';
import { makeSpokenTrack, makeSpokenVideo, wordErrorRate, type SpokenPart, type SpokenTrack, type TimeSpan } from '../support/speech.ts';
import { WORD_LEAD_IN_MS, WORD_TAIL_MS } from '../../job-images/whisper/src/analysis/words.ts';
import { keptPauseMs } from '../../job-images/whisper/src/analysis/pacing.ts';
import { SHORTEST_KEPT_SIDE_MS } from '../../job-images/whisper/src/analysis/silences.ts';
import { Project } from '../../api/src/projects/entities.ts';

interface EditJson {
  uuid: string;
  type: string;
  start_ms: number;
  end_ms: number;
  active: boolean;
  reason: string;
  confidence: number | null;
  pause: { start_ms: number; end_ms: number; kept_ms: number | null; kept_split: number; breath: { start_ms: number; end_ms: number } | null; keep_breath: boolean } | null;
}

/**
 * The whole pipeline on speech with known truth: flite phrases joined by pauses of chosen
 * lengths, uploaded as a project's video, analysed by the whisper image's program against
 * the offline recognizer behind the OpenAI-compatible API.
 */
describe('analysis, end to end: the analyze program on generated speech (local backend, offline recognizer)', function () {
  this.timeout(180_000);
  let app: TestApp;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-analysis-'));
    app = await startTestApp({ JOB_BACKEND: 'local' });
  });
  after(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  let serial = 0;
  async function spokenVideo(parts: readonly SpokenPart[]): Promise<SpokenTrack> {
    const name = `talk-${process.pid}-${++serial}`;
    return makeSpokenVideo(dir, `${name}.mp4`, await makeSpokenTrack(dir, `${name}.wav`, parts));
  }

  async function projectWith(user: SignedIn, tracks: readonly SpokenTrack[]): Promise<string> {
    const created = await user.client.post('/api/v1/projects/', { name: 'Talk' });
    const projectId = (await json(created)).uuid as string;
    for (const track of tracks) {
      const uploaded = await uploadMedia(user.client, track.path, { contentType: 'video/mp4', scopeProjectId: projectId });
      await fileWhen(app.services.orm, uploaded.mediaFileId, (file) => file.status === 'UPLOADED');
    }
    return projectId;
  }

  /** Analyzes with the project stream open; returns the project's status after it and the stream's analysis frames. */
  async function analyzed(user: SignedIn, projectId: string, body: Record<string, unknown>) {
    const stream = await openSse(user.client, `/api/v1/projects/${projectId}/events`);
    try {
      const answer = await user.client.post(`/api/v1/projects/${projectId}/analyze`, body);
      expect(answer.status, await answer.clone().text()).to.be.oneOf([200, 202]);
      expect((await json(answer)).status).to.equal('analyzing');
      const { frame, before } = await stream.until((frame) => isEvent('analysis_complete')(frame) || isEvent('analysis_failed')(frame), 150_000);
      const project = await app.services.orm.em.fork().findOneOrFail(Project, projectId);
      return { status: project.status, end: frame, before: before.filter(isAnyEvent) };
    } finally {
      stream.close();
    }
  }

  async function editsOf(user: SignedIn, projectId: string): Promise<EditJson[]> {
    return (await json(await user.client.get(`/api/v1/projects/${projectId}/edits/`))).data;
  }

  const overlaps = (edit: EditJson, span: TimeSpan) => edit.start_ms < span.endMs && span.startMs < edit.end_ms;

  it('a pause longer than the pacing\'s shortest cut pause is shortened inside the pause to the kept length of its pacing level, split after the last word and before the next; a short pause is kept; no cut touches a phrase', async () => {
    const user = await signUpAndLogin(app, { credits: 10 });
    const track = await spokenVideo([
      { say: 'welcome to the show' },
      { pauseMs: 2500 },
      { say: 'today we talk about editing' },
      { pauseMs: 250 },
      { say: 'thank you for watching' },
    ]);
    const projectId = await projectWith(user, [track]);
    const outcome = await analyzed(user, projectId, { pacing_level: 50, false_start_sensitivity: 50, language: 'en' });
    expect(outcome.status).to.equal('analyzed');

    const edits = await editsOf(user, projectId);
    expect(outcome.before.filter(isEvent('analysis_started')), 'analysis_started on the project stream').to.have.length(1);
    expect(outcome.before.filter(isEvent('analysis_progress')).map((frame) => dataOf(frame).step), 'progress at each step').to.include.members(['transcribing', 'finding_cuts']);
    expect(dataOf(outcome.end), 'analysis_complete { edit_count }').to.include({ edit_count: edits.length });
    const [long, short] = track.pauses;
    const silences = edits.filter((edit) => edit.type === 'silence');
    const inLong = silences.filter((edit) => overlaps(edit, long!));
    expect(inLong, JSON.stringify(edits)).to.have.length(1);
    // the pause is shortened (issue 39): its edges lie near the phrase edges, and it keeps keptPauseMs(50) of itself around what it removes
    const { pause } = inLong[0]!;
    expect(pause, JSON.stringify(inLong[0])).to.not.equal(null);
    expect(pause!.start_ms).to.be.within(long!.startMs - 150, long!.startMs + 150);
    expect(pause!.end_ms).to.be.within(long!.endMs - 150, long!.endMs + 150);
    expect(pause!.kept_ms).to.equal(keptPauseMs(50));
    expect(inLong[0]!.start_ms - pause!.start_ms + (pause!.end_ms - inLong[0]!.end_ms)).to.equal(keptPauseMs(50));
    expect(inLong[0]!.start_ms - pause!.start_ms, 'at least SHORTEST_KEPT_SIDE_MS after the speech').to.be.at.least(SHORTEST_KEPT_SIDE_MS);
    expect(pause!.end_ms - inLong[0]!.end_ms, 'and before it').to.be.at.least(SHORTEST_KEPT_SIDE_MS);
    expect(inLong[0]!.end_ms - inLong[0]!.start_ms, 'most of the pause goes').to.be.at.least(1500);
    expect(inLong[0]!.reason, 'says why').to.match(/^Pause of 2\.\d s, shortened to 0\.42 s$/);
    for (const edit of edits) expect(edit.confidence, 'each AI edit says how sure').to.be.within(0, 1);
    expect(silences.filter((edit) => overlaps(edit, short!)), 'a 250 ms pause is kept').to.deep.equal([]);
    for (const phrase of track.phrases) {
      expect(edits.filter((edit) => edit.active && overlaps(edit, phrase)), `no active cut clips "${phrase.text}"`).to.deep.equal([]);
    }

    const project = await json(await user.client.get(`/api/v1/projects/${projectId}`));
    expect(project.status).to.equal('analyzed');
    expect(project.transcript.words.length).to.be.at.least(8);
    const billing = await json(await user.client.get('/api/v1/users/me/billing'));
    expect(billing.credits.ai_minutes.reserved, 'the reservation is settled').to.equal(0);
    expect(billing.credits.ai_minutes.balance, 'a minute or less of audio costs its rounded minutes').to.be.below(10);
  });

  it('each AI edit says why and how sure (reason, confidence 0–1); where speech cannot be told from a noise floor above −30 dBFS, the pauses are offered inactive and the run records why', async () => {
    const user = await signUpAndLogin(app, { credits: 10 });
    const name = `noisy-${process.pid}-${++serial}`;
    const clean = await makeSpokenTrack(dir, `${name}.wav`, [{ say: 'welcome to the show' }, { pauseMs: 2500 }, { say: 'thank you for watching' }]);
    const noisy = await makeSpokenVideo(dir, `${name}.mp4`, { ...clean, path: await withPinkNoise(clean.path, join(dir, `${name}-noisy.wav`), -24) });
    const projectId = await projectWith(user, [noisy]);
    expect((await analyzed(user, projectId, { pacing_level: 50, false_start_sensitivity: 50, language: 'en' })).status).to.equal('analyzed');
    const pauses = (await editsOf(user, projectId)).filter((edit) => edit.type === 'silence');
    expect(pauses, 'the pauses are offered').to.have.length.at.least(1);
    for (const edit of pauses) {
      expect(edit.active, JSON.stringify(edit)).to.equal(false);
      expect(edit.reason).to.match(/^Pause of \d+\.\d s(, shortened to \d\.\d\d s)? \(offered, not cut: /);
      expect(edit.confidence).to.be.within(0, 0.3);
    }
    const [run] = (await json(await user.client.get(`/api/v1/projects/${projectId}/analysis-runs`))).data;
    expect(run.weak_evidence).to.have.length(1);
    expect(run.weak_evidence[0]).to.include({ source_index: 0 });
    expect(run.weak_evidence[0].reason).to.match(/noise floor/);
  });

  it('room tone at −45 dBFS in long pauses: no word is heard in them, so none becomes a caption, blocks their cuts or starts a false start', async () => {
    const user = await signUpAndLogin(app, { credits: 10 });
    const name = `room-tone-${process.pid}-${++serial}`;
    const clean = await makeSpokenTrack(dir, `${name}.wav`, [
      { say: 'welcome back to the channel' },
      { pauseMs: 6000 },
      { say: 'today we look at three cameras' },
      { pauseMs: 4000 },
      { say: 'and which one I would buy' },
    ]);
    const toned = await makeSpokenVideo(dir, `${name}.mp4`, { ...clean, path: await withPinkNoise(clean.path, join(dir, `${name}-tone.wav`), -45) });
    const projectId = await projectWith(user, [toned]);
    expect((await analyzed(user, projectId, { pacing_level: 50, false_start_sensitivity: 50, language: null })).status).to.equal('analyzed');
    const project = await json(await user.client.get(`/api/v1/projects/${projectId}`));
    const inside = (span: TimeSpan) => (word: { start_ms: number; end_ms: number }) => word.end_ms > span.startMs + WORD_TAIL_MS && word.start_ms < span.endMs - WORD_LEAD_IN_MS;
    for (const pause of toned.pauses) expect(project.transcript.words.filter(inside(pause)), `words heard in the pause ${pause.startMs}–${pause.endMs}`).to.deep.equal([]);
    const edits = await editsOf(user, projectId);
    for (const pause of toned.pauses) {
      const cuts = edits.filter((edit) => edit.type === 'silence' && edit.active && overlaps(edit, pause));
      expect(cuts, `the pause ${pause.startMs}–${pause.endMs} is cut`).to.have.length(1);
      expect(cuts[0]!.end_ms - cuts[0]!.start_ms).to.be.at.least((pause.endMs - pause.startMs) / 2);
    }
    expect(edits.filter((edit) => edit.type === 'false_start')).to.deep.equal([]);
  });

  it('pacing_level picks the shortest pause that is cut: re-analysed at 0 only the 2.5 s pause goes, at 100 the 0.7 s one too; the edits follow the newest run', async () => {
    const user = await signUpAndLogin(app, { credits: 10 });
    const track = await spokenVideo([
      { say: 'we start with the camera' },
      { pauseMs: 700 },
      { say: 'then we set up the lights' },
      { pauseMs: 2500 },
      { say: 'and finally the sound' },
    ]);
    const projectId = await projectWith(user, [track]);
    const [short, long] = track.pauses;
    const cutPauses = async () => {
      const silences = (await editsOf(user, projectId)).filter((edit) => edit.type === 'silence');
      return [short!, long!].map((pause) => silences.some((edit) => overlaps(edit, pause)));
    };
    expect((await analyzed(user, projectId, { pacing_level: 0, false_start_sensitivity: 50, language: 'en' })).status).to.equal('analyzed');
    expect(await cutPauses(), 'patient pacing (2000 ms): only the long pause').to.deep.equal([false, true]);
    expect((await analyzed(user, projectId, { pacing_level: 100, false_start_sensitivity: 50, language: 'en' })).status, 're-analysis from analyzed').to.equal('analyzed');
    expect(await cutPauses(), 'brisk pacing (400 ms): both').to.deep.equal([true, true]);
    const runs = (await json(await user.client.get(`/api/v1/projects/${projectId}/analysis-runs`))).data;
    expect(runs.map((run: { pacing_level: number }) => run.pacing_level), 'newest first').to.deep.equal([100, 0]);
  });

  it('a false start: the restarted phrase is one false_start edit quoting its words, and the take that follows is kept whole', async () => {
    const user = await signUpAndLogin(app, { credits: 10 });
    const track = await spokenVideo([
      { say: 'so today i want to talk about' },
      { pauseMs: 500 },
      { say: 'so today i want to show you how to edit a video' },
    ]);
    const projectId = await projectWith(user, [track]);
    expect((await analyzed(user, projectId, { pacing_level: 50, false_start_sensitivity: 50, language: 'en' })).status).to.equal('analyzed');
    const edits = await editsOf(user, projectId);
    const [dropped, kept] = track.phrases;
    const falseStarts = edits.filter((edit) => edit.type === 'false_start');
    expect(falseStarts, JSON.stringify(edits)).to.have.length(1);
    expect(falseStarts[0]!.active).to.equal(true);
    expect(falseStarts[0]!.reason).to.match(/today/i);
    expect(overlaps(falseStarts[0]!, dropped!)).to.equal(true);
    expect(edits.filter((edit) => edit.active && overlaps(edit, kept!)), 'the last take is kept').to.deep.equal([]);
  });

  it('a silent source in the spine is analysed with the others: its span gets no words and no cut, the audible one is transcribed at its timeline place', async () => {
    const user = await signUpAndLogin(app, { credits: 10 });
    const projectId = (await json(await user.client.post('/api/v1/projects/', { name: 'Silent first' }))).uuid as string;
    const silent = await makeVideo(dir, `silent-${process.pid}-${++serial}.mp4`, { seconds: 2, audio: 'none' });
    const spoken = await spokenVideo([{ say: 'the sound starts here' }, { pauseMs: 2500 }, { say: 'and ends here' }]);
    for (const path of [silent, spoken.path]) {
      const uploaded = await uploadMedia(user.client, path, { contentType: 'video/mp4', scopeProjectId: projectId });
      await fileWhen(app.services.orm, uploaded.mediaFileId, (file) => file.status === 'UPLOADED');
    }
    expect((await analyzed(user, projectId, { pacing_level: 50, false_start_sensitivity: 50, language: 'en' })).status).to.equal('analyzed');
    const spine = (await json(await user.client.get(`/api/v1/projects/${projectId}/spine`))).data;
    const offset = spine[0].duration_ms as number;
    const project = await json(await user.client.get(`/api/v1/projects/${projectId}`));
    expect(project.transcript.words.every((word: { source_index: number; start_ms: number }) => word.source_index === 1 && word.start_ms >= offset)).to.equal(true);
    const edits = await editsOf(user, projectId);
    expect(edits.filter((edit) => edit.start_ms < offset), 'nothing is cut in the silent source').to.deep.equal([]);
    expect(edits.filter((edit) => edit.type === 'silence')).to.have.length.at.least(1);
  });

  it('two sources in a spine: the second source\'s words and cuts are on the timeline after the first', async () => {
    const user = await signUpAndLogin(app, { credits: 10 });
    const first = await spokenVideo([{ say: 'this is the first clip' }]);
    const second = await spokenVideo([{ say: 'here comes the second clip' }, { pauseMs: 2500 }, { say: 'and it ends here' }]);
    const projectId = await projectWith(user, [first, second]);
    expect((await analyzed(user, projectId, { pacing_level: 50, false_start_sensitivity: 50, language: null })).status).to.equal('analyzed');

    const spine = (await json(await user.client.get(`/api/v1/projects/${projectId}/spine`))).data;
    const offset = spine[0].duration_ms as number;
    const pause = { startMs: offset + second.pauses[0]!.startMs, endMs: offset + second.pauses[0]!.endMs };
    const cut = (await editsOf(user, projectId)).filter((edit) => edit.type === 'silence' && overlaps(edit, pause));
    expect(cut, 'the second source\'s pause, at its timeline place').to.have.length(1);
    const project = await json(await user.client.get(`/api/v1/projects/${projectId}`));
    const secondWords = project.transcript.words.filter((word: { source_index: number }) => word.source_index === 1);
    expect(secondWords.length).to.be.greaterThan(3);
    expect(secondWords[0].start_ms).to.be.at.least(offset);
  });

  // espeak-ng's Spanish and Portuguese voices are synthetic and hard (about a third of their
  // words are misheard, and its pt-br voice is taken for Italian or Spanish when the language
  // is left to detect): Spanish is detected, Portuguese is asked for, as a creator would set it.
  for (const [language, voice, asked, first, second] of [
    ['es', 'es', null, 'hoy vamos a hablar de la edición de vídeo', 'primero quitamos las pausas largas del vídeo'],
    ['pt', 'pt-br', 'pt', 'hoje vamos falar sobre edição de vídeo', 'primeiro tiramos as pausas longas do vídeo'],
  ] as const) {
    it(`a talk in ${language} (language ${asked ?? 'left to detect'}): transcribed in ${language}, its long pause cut`, async () => {
      const user = await signUpAndLogin(app, { credits: 10 });
      const track = await spokenVideo([{ say: first, voice }, { pauseMs: 2500 }, { say: second, voice }]);
      const projectId = await projectWith(user, [track]);
      expect((await analyzed(user, projectId, { pacing_level: 50, false_start_sensitivity: 50, language: asked })).status).to.equal('analyzed');
      const project = await json(await user.client.get(`/api/v1/projects/${projectId}`));
      expect(project.transcript.language).to.equal(language);
      const heard = project.transcript.words.map((word: { word: string }) => word.word);
      // Spanish words, not noise (espeak's voice is hard to hear: "vídeo" comes back as "Rineo")
      expect(wordErrorRate(`${first} ${second}`, heard), `heard "${heard.join(' ')}"`).to.be.at.most(0.5);
      const cut = (await editsOf(user, projectId)).filter((edit) => edit.type === 'silence' && overlaps(edit, track.pauses[0]!));
      expect(cut, 'the 2.5 s pause').to.have.length(1);
    });
  }

  it('a language the recognizer does not know: the analysis fails with its refusal in the owner\'s language, and the credits are released', async () => {
    const user = await signUpAndLogin(app, { credits: 10, locale: 'pt' });
    const track = await spokenVideo([{ say: 'hello and welcome' }]);
    const projectId = await projectWith(user, [track]);
    const outcome = await analyzed(user, projectId, { pacing_level: 50, false_start_sensitivity: 50, language: 'zz' });
    expect(outcome.status).to.equal('failed');
    expect(dataOf(outcome.end).error).to.equal(translate('pt', 'failure.analysis.unsupported_language', { language: 'zz' }));
    const runs = (await json(await user.client.get(`/api/v1/projects/${projectId}/analysis-runs`))).data;
    expect(runs[0].status).to.equal('failed');
    expect((await app.services.orm.em.fork().findOneOrFail(AnalysisRun, runs[0].uuid)).errorCode).to.equal('analysis.unsupported_language');
    const billing = await json(await user.client.get('/api/v1/users/me/billing'));
    expect(billing.credits.ai_minutes).to.include({ balance: 10, reserved: 0 });
  });
});
