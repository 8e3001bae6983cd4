/**
 * The bare baseline of bench/api: Koa, pg and ioredis doing the I/O Cutroom does for the
 * three benchmarked routes (the same Redis keys, the same SQL, bound parameters) and
 * answering the same JSON, with nothing else: no ORM, no validation library, no logs.
 * run.ts checks before measuring that both answer alike.
 *
 *   PORT=… DATABASE_URL=… REDIS_URL=… REDIS_KEY_PREFIX=… node bench/api/baseline.ts
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import Koa from 'koa';
import pg from 'pg';
import { Redis } from 'ioredis';
// The tier table is data with no imports of its own: taking it keeps the limits the same without loading any of Cutroom.
import { TIERS } from '../../api/src/billing/tiers.ts';
import { billingStatements } from '../../api/src/billing/billing-service.ts';

interface StoredSession {
  user_id: string;
  created_at: number;
  expires_at: number;
  remember_me: boolean;
}

interface UserRecord {
  id: string;
  name: string;
  username: string;
  email: string;
  password_hash: string | null;
  email_verified: boolean;
  locale: string;
  is_superuser: boolean;
  storage_used_bytes: string;
  created_at: Date;
}

const CSRF_SECONDS = Number(process.env.SESSION_TIMEOUT_MINUTES ?? 30) * 60;
const REMEMBER_ME_SECONDS = Number(process.env.SESSION_REMEMBER_ME_DAYS ?? 30) * 86_400;

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DATABASE_POOL_MAX ?? 10) });
const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0', { keyPrefix: process.env.REDIS_KEY_PREFIX ?? 'cutroom:' });
/** A named (prepared) statement, as Cutroom runs its hot-path statements. */
const prepared = (name: keyof typeof SQL, values: unknown[]) => ({ name: `baseline.${name}`, text: SQL[name], values });
const hash = (value: string) => createHash('sha256').update(value).digest('base64url');

// Cutroom's prepared statements (api/src/accounts, api/src/projects; billing's come from billingStatements), as it sends them.
const SQL = {
  user: 'select id, name, username, email, password_hash, email_verified, locale, is_superuser, storage_used_bytes, created_at from users where id = $1',
  countProjects: 'select count(*) as count from projects where user_id = $1',
  page: `select id, user_id, name, status, settings, transcript, active_run_id, created_at, updated_at, count(*) over () as total
     from projects where user_id = $1 order by created_at desc, id desc limit $2 offset $3`,
  lockUser: 'select 1 as locked from users where id = $1 for update',
  keyHolder: `select k.id as key_id, k.scopes, k.expires_at, k.revoked_at, k.last_used_at, u.id, u.name, u.username, u.email, u.password_hash, u.email_verified, u.locale, u.is_superuser, u.storage_used_bytes, u.created_at
     from api_keys k join users u on u.id = k.user_id where k.key_hash = $1`,
  touchKey: 'update api_keys set last_used_at = $1 where id = $2 and (last_used_at is null or last_used_at < $3)',
  insertWithinLimit: `insert into projects (id, user_id, name, status, settings, created_at, updated_at)
     select $1, $2, $3, 'created', '{}', $4, $5
     where $6::int is null or (select count(*) from projects where user_id = $7) < $8::int
     returning id`,
};

const KEY_SHAPE = /^crk_live_[A-Za-z0-9_-]{43}$/;
const MINUTE_MS = 60_000;

/** `Authorization: Bearer <key>`: the key's user when it is live and has the scope, as Cutroom checks it (one hash, one query, last_used_at once a minute). */
async function keyHolderOf(authorization: string, scope: 'read' | 'write'): Promise<UserRecord | null> {
  const presented = /^Bearer[ \t]+(.*)$/i.exec(authorization)?.[1]?.trim() ?? '';
  const { rows } = await pool.query<UserRecord & { key_id: string; scopes: string[]; expires_at: Date | null; revoked_at: Date | null; last_used_at: Date | null }>(
    prepared('keyHolder', [createHash('sha256').update(presented).digest('hex')]),
  );
  const row = rows[0];
  const now = new Date();
  if (!row || !KEY_SHAPE.test(presented) || row.revoked_at || (row.expires_at && row.expires_at <= now) || !row.scopes.includes(scope)) return null;
  if (!row.last_used_at || now.getTime() - row.last_used_at.getTime() >= MINUTE_MS) {
    await pool.query(prepared('touchKey', [now, row.key_id, new Date(now.getTime() - MINUTE_MS)]));
  }
  return row;
}

async function sessionOf(cookieHeader: string | undefined): Promise<{ key: string; stored: StoredSession; user: UserRecord } | null> {
  const cookie = /(?:^|;\s*)session=([^;]+)/.exec(cookieHeader ?? '')?.[1];
  if (!cookie) return null;
  const key = hash(cookie);
  const raw = await redis.get(`session:${key}`);
  if (!raw) return null;
  const stored = JSON.parse(raw) as StoredSession;
  if (stored.expires_at <= Date.now()) return null;
  const { rows } = await pool.query<UserRecord>(prepared('user', [stored.user_id]));
  return rows[0] ? { key, stored, user: rows[0] } : null;
}

/** Checks a CSRF token against its session and extends its life, as Cutroom's session store does. */
async function csrfValid(session: { key: string; stored: StoredSession }, token: string | undefined): Promise<boolean> {
  if (!token) return false;
  const key = hash(token);
  const raw = await redis.get(`csrf:${key}`);
  if (!raw) return false;
  const stored = JSON.parse(raw) as { session: string; expires_at: number };
  if (stored.session !== session.key || stored.expires_at <= Date.now()) return false;
  await storeCsrf(key, session);
  return true;
}

async function storeCsrf(key: string, session: { key: string; stored: StoredSession }): Promise<void> {
  const lifetime = (session.stored.remember_me ? REMEMBER_ME_SECONDS : CSRF_SECONDS) * 1000;
  const expiresAt = Math.min(Date.now() + lifetime, session.stored.expires_at);
  await redis.set(`csrf:${key}`, JSON.stringify({ session: session.key, expires_at: expiresAt }), 'PX', Math.max(1, expiresAt - Date.now()));
}

function userView(user: UserRecord) {
  return {
    id: user.id,
    name: user.name,
    username: user.username,
    email: user.email,
    email_verified: user.email_verified,
    locale: user.locale,
    is_superuser: user.is_superuser,
    storage_used_bytes: Number(user.storage_used_bytes),
    has_password: user.password_hash !== null,
    created_at: user.created_at.toISOString(),
  };
}

function projectSummary(row: Record<string, unknown>) {
  return {
    uuid: row.id,
    name: row.name,
    status: row.status,
    active_run_id: row.active_run_id ?? null,
    created_at: (row.created_at as Date).toISOString(),
    updated_at: (row.updated_at as Date).toISOString(),
  };
}

function plan(subscription: { tier: string; status: string; trial_ends_at: Date | null }) {
  const now = new Date();
  const trialing = subscription.status === 'trialing' && !!subscription.trial_ends_at && subscription.trial_ends_at > now;
  const paid = ['active', 'past_due'].includes(subscription.status) && subscription.tier !== 'Free';
  const tier = trialing || paid ? subscription.tier : 'Free';
  const status = subscription.status === 'trialing' && !trialing ? 'none' : subscription.status;
  return { tier, status, limits: TIERS[tier as keyof typeof TIERS], paid, trialing };
}

async function billingOf(user: UserRecord) {
  const email = createHash('sha256').update(user.email.trim().toLowerCase()).digest('hex');
  const [row, count] = await Promise.all([
    pool.query({ name: 'baseline.billing.status', text: billingStatements.status.text, values: [email, user.id] }).then(({ rows }) => rows[0]),
    pool.query(prepared('countProjects', [user.id])).then(({ rows }) => Number(rows[0].count)),
  ]);
  const at = (ms: string | null) => (ms === null ? null : new Date(Number(ms)));
  const current = plan({ tier: row.tier, status: row.status, trial_ends_at: at(row.trial_ends_at_ms) });
  return {
    tier: current.tier,
    subscription_status: current.status,
    trial_ends_at: at(row.trial_ends_at_ms)?.toISOString() ?? null,
    credits: { ai_minutes: { balance: Number(row.balance), reserved: Number(row.reserved) } },
    has_active_plan: current.paid || current.trialing,
    trial_used: row.trial_used || (row.tombstone_trial_used ?? false),
    billing_interval: row.billing_interval,
    discount_used: row.discount_used,
    is_beta: row.is_beta,
    beta_credits_used: null,
    beta_credits_total: row.beta_credits_total === null ? null : Number(row.beta_credits_total),
    beta_renewal_date: at(row.beta_renewal_date_ms)?.toISOString() ?? null,
    scheduled_change: null,
    storage_used_bytes: Number(row.storage_used_bytes),
    storage_quota_bytes: current.limits.storageQuotaBytes,
    project_count: count,
    max_projects: Number.isFinite(current.limits.maxProjects) ? current.limits.maxProjects : -1,
    can_use_ai_director: current.limits.canUseAiDirector,
    can_watermark_free: current.limits.canWatermarkFree,
    can_access_support: current.paid || row.is_beta,
  };
}

async function readJson(req: Koa.Request['req']): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

const app = new Koa();
app.use(async (ctx) => {
  const path = ctx.path;
  if (path === '/healthz') {
    ctx.body = { status: 'ok' };
    return;
  }
  if (path === '/api/v1/auth/check-auth' && ctx.method === 'GET') {
    ctx.set('Cache-Control', 'no-store');
    const session = await sessionOf(ctx.get('Cookie'));
    if (!session) {
      ctx.body = { authenticated: false, message: 'Not authenticated.', oauth_providers: [] };
      return;
    }
    let csrfToken = /(?:^|;\s*)csrf_token=([^;]+)/.exec(ctx.get('Cookie'))?.[1];
    if (!csrfToken || !(await csrfValid(session, csrfToken))) {
      csrfToken = randomBytes(32).toString('base64url');
      await storeCsrf(hash(csrfToken), session);
    }
    ctx.body = {
      authenticated: true,
      user: userView(session.user),
      session: {
        created_at: new Date(session.stored.created_at).toISOString(),
        expires_at: new Date(session.stored.expires_at).toISOString(),
        remember_me: session.stored.remember_me,
      },
      oauth_providers: [],
      csrf_token: csrfToken,
      billing: await billingOf(session.user),
    };
    return;
  }
  if (path === '/api/v1/projects/') {
    const authorization = ctx.get('Authorization');
    const keyUser = authorization ? await keyHolderOf(authorization, ctx.method === 'GET' ? 'read' : 'write') : null;
    const session = authorization ? null : await sessionOf(ctx.get('Cookie'));
    const user = keyUser ?? session?.user;
    if (!user) {
      ctx.status = 401;
      ctx.body = { detail: 'Not authenticated.' };
      return;
    }
    if (ctx.method === 'GET') {
      const page = Number(ctx.query.page ?? 1);
      const perPage = Number(ctx.query.items_per_page ?? 20);
      const { rows } = await pool.query(prepared('page', [user.id, perPage, (page - 1) * perPage]));
      const total = rows[0] ? Number(rows[0].total) : Number((await pool.query(prepared('countProjects', [user.id]))).rows[0].count);
      ctx.body = { data: rows.map(projectSummary), total_count: total, has_more: page * perPage < total, page, items_per_page: perPage };
      return;
    }
    if (ctx.method === 'POST') {
      // A key's request carries no CSRF token (no browser sends a key by itself).
      if (session && !(await csrfValid(session, ctx.get('X-CSRF-Token') || undefined))) {
        ctx.status = 403;
        ctx.body = { detail: 'CSRF token not found' };
        return;
      }
      const body = (await readJson(ctx.req)) as { name?: unknown };
      const name = typeof body.name === 'string' ? body.name.trim() : '';
      if (!name || name.length > 200) {
        ctx.status = 422;
        ctx.body = { detail: 'name' };
        return;
      }
      // The tier is read before the transaction, as Cutroom's billing reads it; only the lock and the insert run inside.
      const record = (await pool.query({ name: 'baseline.billing.plan', text: billingStatements.plan.text, values: [user.id] })).rows[0];
      const limit = plan({ tier: record.tier, status: record.status, trial_ends_at: record.trial_ends_at_ms === null ? null : new Date(Number(record.trial_ends_at_ms)) }).limits.maxProjects;
      const id = randomUUID();
      const now = new Date();
      const client = await pool.connect();
      let inserted: boolean;
      try {
        await client.query('begin');
        await client.query(prepared('lockUser', [user.id]));
        const bound = Number.isFinite(limit) ? limit : null;
        inserted = (await client.query(prepared('insertWithinLimit', [id, user.id, name, now, now, bound, user.id, bound]))).rows.length > 0;
        await client.query('commit');
      } catch (error) {
        await client.query('rollback');
        throw error;
      } finally {
        client.release();
      }
      if (!inserted) {
        ctx.status = 403;
        ctx.body = { detail: 'limit', code: 'ProjectLimitReached' };
        return;
      }
      ctx.status = 201;
      const stamp = now.toISOString();
      ctx.body = { uuid: id, name, status: 'created', active_run_id: null, created_at: stamp, updated_at: stamp, settings: {}, transcript: null };
      return;
    }
  }
  ctx.status = 404;
});

const server = app.listen(Number(process.env.PORT ?? 8000), process.env.HOST ?? '127.0.0.1');
const stop = () => {
  server.close();
  redis.disconnect();
  void pool.end().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
