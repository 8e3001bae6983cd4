import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { startTestApp, json, type TestApp } from '../support/harness.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';
import { completedRun } from '../support/analysis-runs.ts';
import { AnalysisRun } from '../../api/src/analysis/entities.ts';
import { CaptionLine } from '../../api/src/captions/entities.ts';
import { Edit } from '../../api/src/edits/entities.ts';
import { Project } from '../../api/src/projects/entities.ts';
import type { TranscriptWord } from '../../crds/contract/programs/analyze.ts';
import { spoken } from '../analysis/transcripts.ts';

/**
 * Timeline words of a script (test/analysis/transcripts.ts's notation): each word lasts
 * 300 ms with 50 ms between words; a `|NNN` token puts a pause of NNN ms before the next.
 */
function wordsOf(script: string, startMs = 0): TranscriptWord[] {
  return spoken(script, startMs, 300, 50).map((word) => ({ word: word.text, start_ms: word.start_ms, end_ms: word.end_ms, confidence: word.probability, source_index: 0 }));
}

interface Cut {
  type: 'silence' | 'false_start' | 'filler' | 'manual' | 'asset';
  start_ms: number;
  end_ms: number;
  active?: boolean;
  /** Manual cuts are the user's: no run. */
  ownRun?: boolean;
}

interface Line {
  uuid: string;
  sequence: number;
  start_ms: number;
  end_ms: number;
  text: string;
  original_text: string;
}

describe('caption lines: generate from the active run, list, edit', function () {
  this.timeout(60_000);
  let app: TestApp;

  before(async () => {
    app = await startTestApp({ JOB_BACKEND: 'local', WHISPER_BASE_URL: 'http://127.0.0.1:9/v1' });
  });
  after(async () => {
    await app.close();
  });

  async function projectOf(user: SignedIn): Promise<string> {
    const response = await user.client.post('/api/v1/projects/', { name: 'Talk' });
    expect(response.status).to.equal(201);
    return (await json(response)).uuid;
  }

  /** A completed run of the project with this transcript and these edits (no pipeline: the rows the completion writes). */
  async function addRun(user: SignedIn, projectId: string, words: TranscriptWord[], cuts: Cut[] = []): Promise<string> {
    const em = app.services.orm.em.fork();
    const project = await em.findOneOrFail(Project, projectId);
    const run = completedRun(em, project, user.user.id, words);
    for (const cut of cuts) {
      em.create(Edit, {
        id: randomUUID(),
        project,
        runId: (cut.type === 'manual' || cut.type === 'asset') && !cut.ownRun ? null : run.id,
        type: cut.type,
        startMs: cut.start_ms,
        endMs: cut.end_ms,
        active: cut.active ?? true,
        reason: 'test',
        visualMode: cut.type === 'asset' ? 'overlay' : null,
      });
    }
    await em.flush();
    return run.id;
  }

  /** A project whose active run has this transcript and these edits. */
  async function analysedProject(user: SignedIn, words: TranscriptWord[], cuts: Cut[] = []): Promise<{ projectId: string; runId: string }> {
    const projectId = await projectOf(user);
    const runId = await addRun(user, projectId, words, cuts);
    await app.services.orm.em.fork().nativeUpdate(Project, { id: projectId }, { activeRunId: runId, status: 'analyzed', transcript: { words } });
    return { projectId, runId };
  }

  const generate = (user: SignedIn, projectId: string, query = '') => user.client.post(`/api/v1/projects/${projectId}/caption-lines/generate${query ? `?${query}` : ''}`);

  async function linesOf(user: SignedIn, projectId: string): Promise<Line[]> {
    const response = await user.client.get(`/api/v1/projects/${projectId}/caption-lines?items_per_page=100`);
    expect(response.status).to.equal(200);
    return (await json(response)).data;
  }

  async function generated(user: SignedIn, projectId: string, query = ''): Promise<Line[]> {
    const response = await generate(user, projectId, query);
    expect(response.status, await response.clone().text()).to.equal(200);
    return linesOf(user, projectId);
  }

  const texts = (lines: Line[]) => lines.map((line) => line.text);

  it('generate → 200 { project_uuid, lines_created, message }; each line has its first and last word’s timeline times, original_text = text, sequence 0..n−1', async () => {
    const user = await signUpAndLogin(app);
    const words = wordsOf('Hello there. How are you today?', 10_000);
    const { projectId } = await analysedProject(user, words);
    const response = await generate(user, projectId);
    expect(response.status).to.equal(200);
    const body = await json(response);
    expect(body).to.have.all.keys('project_uuid', 'lines_created', 'message');
    expect(body).to.include({ project_uuid: projectId, lines_created: 2 });
    expect(body.message).to.match(/generated/).and.include('2');
    const lines = await linesOf(user, projectId);
    expect(lines.map(({ sequence, start_ms, end_ms, text, original_text }) => ({ sequence, start_ms, end_ms, text, original_text }))).to.deep.equal([
      { sequence: 0, start_ms: words[0]!.start_ms, end_ms: words[1]!.end_ms, text: 'Hello there.', original_text: 'Hello there.' },
      { sequence: 1, start_ms: words[2]!.start_ms, end_ms: words[5]!.end_ms, text: 'How are you today?', original_text: 'How are you today?' },
    ]);
  });

  it('max_words is respected: no line has more words (2, 3, 7, 20), every word captioned once in order; the default is 7', async () => {
    const user = await signUpAndLogin(app);
    const script = Array.from({ length: 45 }, (_, index) => `w${index}`).join(' ');
    const { projectId } = await analysedProject(user, wordsOf(script));
    for (const maxWords of [2, 3, 7, 20]) {
      const lines = await generated(user, projectId, `max_words=${maxWords}&force=true`);
      for (const line of lines) expect(line.text.split(' ').length, `${maxWords}: ${line.text}`).to.be.at.most(maxWords);
      expect(texts(lines).join(' ')).to.equal(script);
      expect(lines).to.have.lengthOf(Math.ceil(45 / maxWords));
    }
    const byDefault = await generated(user, projectId, 'force=true');
    expect(byDefault).to.have.lengthOf(7); // 45 words → 7 lines of at most 7
    expect(Math.max(...byDefault.map((line) => line.text.split(' ').length))).to.equal(7);
  });

  it('lines break at sentence ends, at punctuation when a stretch must be split, and at a pause of 1 s or more', async () => {
    const user = await signUpAndLogin(app);
    const { projectId } = await analysedProject(user, wordsOf('One two three. Four five six seven, eight nine ten eleven |1200 after the pause'));
    expect(texts(await generated(user, projectId, 'max_words=7'))).to.deep.equal(['One two three.', 'Four five six seven,', 'eight nine ten eleven', 'after the pause']);
  });

  it('no line straddles a cut: an active cut between two words ends the line; inactive cuts and asset edits do not', async () => {
    const user = await signUpAndLogin(app);
    const words = wordsOf('alpha beta gamma |600 delta epsilon zeta |600 eta theta iota');
    const { projectId } = await analysedProject(user, words, [
      { type: 'silence', start_ms: words[2]!.end_ms + 100, end_ms: words[3]!.start_ms - 100 },
      { type: 'filler', start_ms: words[5]!.end_ms + 100, end_ms: words[6]!.start_ms - 100, active: false },
      { type: 'asset', start_ms: words[4]!.start_ms, end_ms: words[7]!.end_ms },
    ]);
    const lines = await generated(user, projectId, 'max_words=10');
    expect(texts(lines)).to.deep.equal(['alpha beta gamma', 'delta epsilon zeta eta theta iota']);
    for (const line of lines) expect(line.start_ms >= words[3]!.start_ms || line.end_ms <= words[2]!.end_ms, line.text).to.equal(true);
  });

  it('words inside an active cut are not captioned (an AI false start of the run, a manual cut of the user), and the cut ends the line', async () => {
    const user = await signUpAndLogin(app);
    const words = wordsOf('so we so we need to fix the audio now');
    const { projectId } = await analysedProject(user, words, [
      { type: 'false_start', start_ms: words[0]!.start_ms, end_ms: words[2]!.start_ms - 100 },
      { type: 'manual', start_ms: words[7]!.start_ms - 20, end_ms: words[7]!.end_ms + 20 },
    ]);
    const lines = await generated(user, projectId, 'max_words=10');
    expect(texts(lines)).to.deep.equal(['so we need to fix', 'audio now']);
    expect(lines[0]!.start_ms).to.equal(words[2]!.start_ms);
  });

  it("edits of another run do not cut the active run's captions", async () => {
    const user = await signUpAndLogin(app);
    const words = wordsOf('keep every word here');
    const { projectId } = await analysedProject(user, words);
    await addRun(user, projectId, words, [{ type: 'false_start', start_ms: 0, end_ms: words[3]!.end_ms, ownRun: true }]);
    expect(texts(await generated(user, projectId))).to.deep.equal(['keep every word here']);
  });

  it('without force the existing lines are kept (lines_created 0, the message says so); with force they are replaced', async () => {
    const user = await signUpAndLogin(app);
    const { projectId } = await analysedProject(user, wordsOf('one two three four five six'));
    const first = await generated(user, projectId, 'max_words=3');
    expect(texts(first)).to.deep.equal(['one two three', 'four five six']);
    expect((await user.client.patch(`/api/v1/caption-lines/${first[0]!.uuid}`, { text: 'One, two, three!' })).status).to.equal(200);

    const again = await generate(user, projectId, 'max_words=6');
    expect(again.status).to.equal(200);
    const kept = await json(again);
    expect(kept).to.include({ project_uuid: projectId, lines_created: 0 });
    expect(kept.message).to.match(/kept/).and.include('force');
    const afterKeep = await linesOf(user, projectId);
    expect(afterKeep.map((line) => line.uuid)).to.deep.equal(first.map((line) => line.uuid));
    expect(texts(afterKeep)).to.deep.equal(['One, two, three!', 'four five six']);

    const forced = await generate(user, projectId, 'max_words=6&force=true');
    expect(await json(forced)).to.include({ lines_created: 1 });
    const replaced = await linesOf(user, projectId);
    expect(replaced.map(({ text, original_text, sequence }) => ({ text, original_text, sequence }))).to.deep.equal([{ text: 'one two three four five six', original_text: 'one two three four five six', sequence: 0 }]);
    expect(await app.services.orm.em.fork().count(CaptionLine, { id: { $in: first.map((line) => line.uuid) } })).to.equal(0);
  });

  it('two generations at once without force: one creates the lines, the other keeps them (no duplicate sequence)', async () => {
    const user = await signUpAndLogin(app);
    const { projectId } = await analysedProject(user, wordsOf('a b c d e f g h'));
    const answers = await Promise.all([generate(user, projectId, 'max_words=2'), generate(user, projectId, 'max_words=2')]);
    expect(answers.map((answer) => answer.status)).to.deep.equal([200, 200]);
    const created = (await Promise.all(answers.map(json))).map((body) => body.lines_created).sort();
    expect(created).to.deep.equal([0, 4]);
    expect((await linesOf(user, projectId)).map((line) => line.sequence)).to.deep.equal([0, 1, 2, 3]);
  });

  it('activate another run → the list follows it (each run keeps its own lines)', async () => {
    const user = await signUpAndLogin(app);
    const { projectId, runId: firstRun } = await analysedProject(user, wordsOf('first take words'));
    expect(texts(await generated(user, projectId))).to.deep.equal(['first take words']);
    const secondRun = await addRun(user, projectId, wordsOf('second take here'));

    expect((await user.client.post(`/api/v1/projects/${projectId}/analysis-runs/${secondRun}/activate`)).status).to.equal(200);
    expect(await linesOf(user, projectId)).to.deep.equal([]);
    expect(texts(await generated(user, projectId))).to.deep.equal(['second take here']);

    expect((await user.client.post(`/api/v1/projects/${projectId}/analysis-runs/${firstRun}/activate`)).status).to.equal(200);
    expect(texts(await linesOf(user, projectId))).to.deep.equal(['first take words']);
  });

  it('PATCH { text } → 200 the updated line, text trimmed, original_text preserved', async () => {
    const user = await signUpAndLogin(app);
    const { projectId } = await analysedProject(user, wordsOf('hello wrold'));
    const [line] = await generated(user, projectId);
    const response = await user.client.patch(`/api/v1/caption-lines/${line!.uuid}`, { text: '  Hello world!  ' });
    expect(response.status).to.equal(200);
    expect(await json(response)).to.include({ uuid: line!.uuid, sequence: 0, text: 'Hello world!', original_text: 'hello wrold', start_ms: line!.start_ms, end_ms: line!.end_ms });
    expect((await linesOf(user, projectId))[0]).to.include({ text: 'Hello world!', original_text: 'hello wrold' });
  });

  it('GET is paginated and ordered by sequence: { data, total_count, has_more, page, items_per_page }', async () => {
    const user = await signUpAndLogin(app);
    const { projectId } = await analysedProject(user, wordsOf(Array.from({ length: 10 }, (_, index) => `w${index}`).join(' ')));
    expect((await json(await generate(user, projectId, 'max_words=2'))).lines_created).to.equal(5);
    const page = (n: number) => user.client.get(`/api/v1/projects/${projectId}/caption-lines?page=${n}&items_per_page=2`).then(json);
    const [one, two, three, four] = await Promise.all([page(1), page(2), page(3), page(4)]);
    expect(one).to.have.all.keys('data', 'total_count', 'has_more', 'page', 'items_per_page');
    expect(one).to.include({ total_count: 5, has_more: true, page: 1, items_per_page: 2 });
    expect([...one.data, ...two.data, ...three.data].map((line: Line) => line.sequence)).to.deep.equal([0, 1, 2, 3, 4]);
    expect(texts([...one.data, ...two.data, ...three.data])).to.deep.equal(['w0 w1', 'w2 w3', 'w4 w5', 'w6 w7', 'w8 w9']);
    expect(three).to.include({ has_more: false });
    expect(four.data).to.deep.equal([]);
    expect(one.data[0]).to.have.all.keys('uuid', 'run_id', 'sequence', 'start_ms', 'end_ms', 'text', 'original_text', 'created_at', 'updated_at');
  });

  it('a project without a completed analysis → 409 on generate; its list is empty', async () => {
    const user = await signUpAndLogin(app);
    const projectId = await projectOf(user);
    const response = await generate(user, projectId);
    expect(response.status).to.equal(409);
    expect((await json(response)).detail).to.match(/analy/);
    expect(await linesOf(user, projectId)).to.deep.equal([]);
  });

  it("another user's project or line → 404 (generate, list, PATCH), as is an unknown line", async () => {
    const owner = await signUpAndLogin(app);
    const { projectId } = await analysedProject(owner, wordsOf('private words'));
    const [line] = await generated(owner, projectId);
    const stranger = await signUpAndLogin(app);
    expect((await generate(stranger, projectId)).status).to.equal(404);
    expect((await stranger.client.get(`/api/v1/projects/${projectId}/caption-lines`)).status).to.equal(404);
    const patch = await stranger.client.patch(`/api/v1/caption-lines/${line!.uuid}`, { text: 'mine now' });
    expect(patch.status).to.equal(404);
    expect((await owner.client.patch(`/api/v1/caption-lines/${randomUUID()}`, { text: 'x' })).status).to.equal(404);
    expect(texts(await linesOf(owner, projectId))).to.deep.equal(['private words']);
  });

  it('max_words outside 2–20 or not an integer → 422, force not a boolean → 422; PATCH text empty, blank, over 500 characters, with NUL or unknown keys → 422', async () => {
    const user = await signUpAndLogin(app);
    const { projectId } = await analysedProject(user, wordsOf('some words to caption'));
    for (const query of ['max_words=1', 'max_words=21', 'max_words=0', 'max_words=2.5', 'max_words=seven', 'force=maybe']) {
      expect((await generate(user, projectId, query)).status, query).to.equal(422);
    }
    expect(await linesOf(user, projectId)).to.deep.equal([]);
    const [line] = await generated(user, projectId, 'max_words=20');
    for (const body of [{}, { text: '' }, { text: '   ' }, { text: 'x'.repeat(501) }, { text: 'a\u0000b' }, { text: 'ok', sequence: 3 }, { text: 7 }]) {
      expect((await user.client.patch(`/api/v1/caption-lines/${line!.uuid}`, body)).status, JSON.stringify(body)).to.equal(422);
    }
    expect((await user.client.patch(`/api/v1/caption-lines/${line!.uuid}`, { text: 'x'.repeat(500) })).status).to.equal(200);
  });

  it('lines go with their run, their project and the account (cascade)', async () => {
    const em = () => app.services.orm.em.fork();
    const user = await signUpAndLogin(app);
    const first = await analysedProject(user, wordsOf('run one'));
    await generated(user, first.projectId);
    await em().nativeDelete(AnalysisRun, { id: first.runId });
    expect(await em().count(CaptionLine, { run: first.runId })).to.equal(0);

    const second = await analysedProject(user, wordsOf('project two'));
    await generated(user, second.projectId);
    const third = await analysedProject(user, wordsOf('account three'));
    await generated(user, third.projectId);
    await em().nativeDelete(Project, { id: second.projectId });
    expect(await em().count(CaptionLine, { project: second.projectId })).to.equal(0);
    expect(await em().count(CaptionLine, { project: third.projectId })).to.equal(1);

    expect((await user.client.delete('/api/v1/users/me', { password: user.password })).status).to.equal(204);
    expect(await em().count(CaptionLine, { project: third.projectId })).to.equal(0);
  });
});
