/**
 * The work a chaos campaign keeps asking for, through the HTTP API as a front end asks for
 * it, so that jobs of every program are running whenever a kill lands: uploads (presigned
 * PUT, confirm → artifact; WebM → proxy too), media edits (→ media-edit), Mux imports
 * (→ media-import), analyses with credits (→ analyze) and exports (→ render). Each user
 * of a world works on its own, as fast as the world's job backlog allows.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import bcrypt from 'bcrypt';
import pg from 'pg';
import { runFfmpeg, makeVideo } from '../../hack/fixtures/media.ts';
import { makeSpokenTrack } from '../../hack/fixtures/speech.ts';
import type { Seeded } from '../fuzz/random.ts';
import { ChaosClient } from './client.ts';
import type { MuxDouble } from './mux-double.ts';

/** The campaign's source media, small so that many jobs run in little time; every upload is a unique copy. */
export interface ChaosMedia {
  dir: string;
  /** H.264/AAC MP4 with speech (web-compatible; what analyses transcribe). */
  talk: string;
  /** VP9/Opus WebM (not web-compatible: its artifact job asks for a proxy). */
  clip: string;
}

export async function makeChaosMedia(dir: string): Promise<ChaosMedia> {
  const speech = await makeSpokenTrack(dir, 'speech.wav', [{ say: 'hello there' }, { pauseMs: 700 }, { say: 'this is a short test' }]);
  const talk = await makeVideo(dir, 'talk.mp4', { width: 160, height: 90, seconds: Math.ceil(speech.durationMs / 1000), audio: { wav: speech.path }, fps: 10 });
  const clip = await makeVideo(dir, 'clip.webm', { width: 160, height: 90, seconds: 1, codec: 'vp9', fps: 10 });
  return { dir, talk, clip };
}

let copies = 0;

/** A byte-different copy of a source (a new comment tag, streams copied): content addressing must not fold it onto another. */
async function uniqueCopy(media: ChaosMedia, source: string): Promise<string> {
  const extension = source.slice(source.lastIndexOf('.'));
  const output = join(media.dir, `copy-${++copies}-${randomUUID().slice(0, 8)}${extension}`);
  await runFfmpeg(['-i', source, '-map', '0', '-c', 'copy', '-metadata', `comment=chaos-${randomUUID()}`, output]);
  return output;
}

export interface WorldOptions {
  name: string;
  /** The api this world's users talk to (its address survives restarts: same port). */
  baseUrl: string;
  databaseUrl: string;
  /** Which backend's jobs are this world's (the backlog it waits on). */
  backend: 'local' | 'kubernetes';
  random: Seeded;
  media: ChaosMedia;
  mux: MuxDouble;
  users: number;
  /** No new work while this many of the world's jobs are unfinished. */
  backlog: number;
}

const PASSWORD = 'chaos-password-1';
const CREDIT_MINUTES = 500;

interface Actor {
  userId: string;
  client: ChaosClient;
  projectId: string;
  /** Library items whose file may be edited (not failed as far as we know). */
  library: string[];
}

export type Operation = 'upload-talk' | 'upload-clip' | 'edit' | 'import' | 'analyze' | 'export';

const WEIGHTS: readonly (readonly [Operation, number])[] = [
  ['upload-talk', 3],
  ['upload-clip', 2],
  ['edit', 2],
  ['import', 1],
  ['analyze', 2],
  ['export', 2],
];

export class ChaosWorld {
  readonly #o: WorldOptions;
  readonly #actors: Actor[] = [];
  /** Files whose confirm answered 200. */
  readonly confirmedFileIds: string[] = [];
  /** Requests accepted per operation (jobs asked for). */
  readonly accepted = new Map<Operation, number>();
  /** Refusals per operation and status (409 while processing, …): expected, counted for the report. */
  readonly refused = new Map<string, number>();
  /** Operations that got no answer below 500 within the client's deadline. */
  readonly failures: string[] = [];
  #stopping = false;
  #edits = 0;

  constructor(options: WorldOptions) {
    this.#o = options;
  }

  get clients(): ChaosClient[] {
    return this.#actors.map((actor) => actor.client);
  }

  /** Verified superusers (imports need one) on the Viral tier with AI minutes, logged in, each with a project. */
  async prepare(): Promise<void> {
    for (let index = 0; index < this.#o.users; index++) {
      this.#actors.push({ ...(await createChaosUser(this.#o.databaseUrl, this.#o.baseUrl, `${this.#o.name}_${index}`)), library: [] });
    }
  }

  /** Every user works until `stop`; resolves when each has finished its current operation. */
  async run(): Promise<void> {
    const db = new pg.Pool({ connectionString: this.#o.databaseUrl, max: 2 });
    try {
      await Promise.all(this.#actors.map((actor, index) => this.#work(actor, this.#o.random.fork(`actor-${index}`), db, index)));
    } finally {
      await db.end();
    }
  }

  stop(): void {
    this.#stopping = true;
  }

  async #work(actor: Actor, random: Seeded, db: pg.Pool, index: number): Promise<void> {
    // every program early, each user starting at another point of the list; a refused step (a source
    // still processing, an analysis running) is tried again later, random work in between
    const script: Operation[] = ['upload-talk', 'upload-clip', ...rotated(['import', 'edit', 'analyze', 'export'] as const, index)];
    while (!this.#stopping) {
      const next = script[0];
      // the scripted steps go first, whatever the backlog; random work waits for it to shrink
      const scripted = next !== undefined && (next.startsWith('upload') || random.chance(0.7));
      if (!scripted) {
        const { rows } = await db.query(`select count(*)::int as n from jobs where backend = $1 and completed_at is null`, [this.#o.backend]);
        if ((rows[0] as { n: number }).n >= this.#o.backlog) {
          await pause(300);
          continue;
        }
      }
      const operation = scripted ? next : weighted(random, WEIGHTS);
      let status: number | undefined;
      try {
        status = await this.#perform(actor, operation, random);
      } catch (error) {
        // the api gave no usable answer for long: a finding (the client's 5xx list says which), and the user goes on
        this.failures.push(`${operation}: ${error instanceof Error ? error.message : String(error)}`);
      }
      if (operation === next) {
        script.shift();
        if (status === undefined || status >= 300) script.push(operation);
      }
      await pause(random.int(100, 600));
    }
  }

  async #perform(actor: Actor, operation: Operation, random: Seeded): Promise<number | undefined> {
    const answer = await this.#request(actor, operation, random);
    if (answer === undefined) return undefined;
    if (answer >= 200 && answer < 300) this.accepted.set(operation, (this.accepted.get(operation) ?? 0) + 1);
    else this.refused.set(`${operation} ${answer}`, (this.refused.get(`${operation} ${answer}`) ?? 0) + 1);
    return answer;
  }

  /** The status of the request that asks for the operation's job (undefined: nothing to work on yet). */
  async #request(actor: Actor, operation: Operation, random: Seeded): Promise<number | undefined> {
    const { client } = actor;
    switch (operation) {
      case 'upload-talk':
        return this.#upload(actor, await uniqueCopy(this.#o.media, this.#o.media.talk), 'video/mp4', true);
      case 'upload-clip':
        return this.#upload(actor, await uniqueCopy(this.#o.media, this.#o.media.clip), 'video/webm', false);
      case 'edit': {
        if (actor.library.length === 0) return undefined;
        const itemId = random.pick(actor.library);
        // distinct bounds per edit: identical edits would fold onto one stored file
        const edit = this.#edits++;
        const answer = await client.send('POST', `/api/v1/media/${itemId}/edit`, {
          json: { start_ms: (edit * 40) % 600, extract_audio: random.chance(0.3), save_mode: 'copy', fast_mode: false },
        });
        if (answer.status === 202) actor.library.push(answer.body.new_media_item_uuid);
        return answer.status;
      }
      case 'import': {
        const playbackId = `Chaos${randomBytes(8).toString('hex')}`;
        this.#o.mux.add(playbackId, await readFile(await uniqueCopy(this.#o.media, this.#o.media.talk)), 2);
        const answer = await client.send('POST', '/api/v1/media/videohost', { json: { url: `${this.#o.mux.origin}/${playbackId}.m3u8`, scope: 'library' } });
        if (answer.status === 202) actor.library.push(answer.body.media_item_id);
        return answer.status;
      }
      case 'analyze':
        return (await client.send('POST', `/api/v1/projects/${actor.projectId}/analyze`, { json: { pacing_level: 50, false_start_sensitivity: 50, language: 'en' } })).status;
      case 'export':
        return (await client.send('POST', `/api/v1/projects/${actor.projectId}/exports/`, { json: { name: `Chaos ${randomBytes(3).toString('hex')}`, export_settings: { resolution: '720p' } } })).status;
    }
  }

  async #upload(actor: Actor, path: string, contentType: string, intoProject: boolean): Promise<number> {
    const uploaded = await uploadThroughApi(actor.client, path, contentType, intoProject ? actor.projectId : undefined);
    if (uploaded.status === 200) {
      this.confirmedFileIds.push(uploaded.mediaFileId!);
      if (!intoProject) actor.library.push(uploaded.mediaItemId!);
    }
    return uploaded.status;
  }
}

/** A verified superuser on the Viral tier with AI minutes, logged in through the api, with a project. */
export async function createChaosUser(databaseUrl: string, baseUrl: string, name: string): Promise<{ userId: string; client: ChaosClient; projectId: string }> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const userId = randomUUID();
    const username = `chaos_${name}_${randomBytes(3).toString('hex')}`;
    await db.query(
      `insert into users (id, name, username, email, password_hash, email_verified, is_superuser, locale, created_at) values ($1, $2, $3, $4, $5, true, true, 'en', now())`,
      [userId, `Chaos ${name}`, username, `${username}@chaos.test`, await bcrypt.hash(PASSWORD, 4)],
    );
    await db.query(`insert into subscriptions (user_id, tier, status, updated_at) values ($1, 'Viral', 'active', now())`, [userId]);
    await db.query(`insert into credit_entries (id, user_id, kind, minutes, reference, created_at) values ($1, $2, 'grant', $3, 'chaos-grant', now())`, [randomUUID(), userId, CREDIT_MINUTES]);
    const client = new ChaosClient(() => baseUrl);
    await client.logIn(username, PASSWORD);
    const project = await client.send('POST', '/api/v1/projects/', { json: { name: `Chaos ${name}` } });
    if (project.status !== 201) throw new Error(`project of ${username}: ${project.status} ${JSON.stringify(project.body)}`);
    return { userId, client, projectId: project.body.uuid };
  } finally {
    await db.end();
  }
}

/** Presign (into the project when one is named, else the library), PUT the bytes to the store, confirm (again until it answers: a double confirm is idempotent). */
export async function uploadThroughApi(client: ChaosClient, path: string, contentType: string, projectId?: string): Promise<{ status: number; mediaFileId?: string; mediaItemId?: string }> {
  const size = (await stat(path)).size;
  const presigned = await client.send('POST', '/api/v1/media/presign', {
    json: { filename: path.split('/').pop(), content_type: contentType, size_bytes: size, scope: projectId ? 'project' : 'library', ...(projectId ? { scope_project_id: projectId } : {}) },
  });
  if (presigned.status !== 201) return { status: presigned.status };
  const put = await fetch(presigned.body.upload_url, { method: 'PUT', body: await readFile(path), headers: { 'Content-Type': contentType } });
  if (!put.ok) throw new Error(`PUT to the store: ${put.status} ${await put.text()}`);
  const confirmed = await client.send('POST', `/api/v1/media/${presigned.body.media_file_id}/confirm`);
  return { status: confirmed.status, mediaFileId: presigned.body.media_file_id, mediaItemId: presigned.body.media_item_id };
}

function weighted<T>(random: Seeded, choices: readonly (readonly [T, number])[]): T {
  const total = choices.reduce((sum, [, weight]) => sum + weight, 0);
  let roll = random.next() * total;
  for (const [choice, weight] of choices) {
    roll -= weight;
    if (roll < 0) return choice;
  }
  return choices[choices.length - 1]![0];
}

function rotated<T>(items: readonly T[], by: number): T[] {
  const shift = by % items.length;
  return [...items.slice(shift), ...items.slice(0, shift)];
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
