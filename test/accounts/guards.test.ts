import { expect } from 'chai';
import { z } from 'zod';
import type { AppRouter } from '../../api/src/accounts/guards.ts';
import { ownedBy } from '../../api/src/accounts/ownership.ts';
import { json, startTestApp, type TestApp } from '../support/harness.ts';
import { Client, signUpAndLogin } from '../support/users.ts';

/** A stand-in resource store, so the guards and the ownership rule run through the real middleware. */
const notes = new Map<string, { id: string; userId: string; text: string }>();

function probeRoutes(router: AppRouter): void {
  router.add({
    method: 'get',
    path: '/api/v1/test/notes/{note_id}',
    summary: 'A resource owned by a user.',
    tags: ['test'],
    access: 'session',
    scope: 'read',
    params: z.object({ note_id: z.string() }),
    responses: { 200: { description: 'The note' } },
    handler: (ctx, { params, caller }) => {
      ctx.body = ownedBy(notes.get(params.note_id), caller.user.id);
    },
  });
  router.add({
    method: 'get',
    path: '/api/v1/test/whoami',
    summary: 'What the session guard found.',
    tags: ['test'],
    access: 'session-only',
    responses: { 200: { description: 'The caller' } },
    handler: (ctx, { caller }) => {
      const { user, session } = caller;
      ctx.body = { user_id: user.id, session_user_id: session.userId, remember_me: session.rememberMe };
    },
  });
  router.add({
    method: 'post',
    path: '/api/v1/test/admin-only',
    summary: 'Superusers only.',
    tags: ['test'],
    access: 'superuser',
    scope: 'write',
    responses: { 200: { description: 'Done' } },
    handler: (ctx, { caller }) => {
      ctx.body = { done: true, by: caller.user.username };
    },
  });
}

describe('rule 9: guards and ownership', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp({}, {}, { extend: probeRoutes });
  });
  after(() => app.close());

  it("another user's resource is 404, exactly like a missing one (ids reveal nothing)", async () => {
    const owner = await signUpAndLogin(app);
    const stranger = await signUpAndLogin(app);
    notes.set('n1', { id: 'n1', userId: owner.user.id, text: 'mine' });
    expect((await owner.client.get('/api/v1/test/notes/n1')).status).to.equal(200);
    const theirs = await stranger.client.get('/api/v1/test/notes/n1');
    const missing = await stranger.client.get('/api/v1/test/notes/nope');
    expect(theirs.status).to.equal(404);
    expect(await json(theirs)).to.deep.equal(await json(missing));
  });

  it('superuser routes: 401 without a session, 403 for other users, allowed for superusers (CSRF still checked)', async () => {
    expect((await new Client(app).post('/api/v1/test/admin-only')).status).to.equal(401);
    const user = await signUpAndLogin(app);
    expect((await user.client.post('/api/v1/test/admin-only')).status).to.equal(403);
    const admin = await signUpAndLogin(app, { superuser: true });
    expect((await admin.client.post('/api/v1/test/admin-only', undefined, { headers: { 'X-CSRF-Token': 'forged' } })).status).to.equal(403);
    const allowed = await admin.client.post('/api/v1/test/admin-only');
    expect(allowed.status).to.equal(200);
    expect(await json(allowed)).to.deep.equal({ done: true, by: admin.username });
  });

  it('the session guard puts the user and the session on ctx.state.auth', async () => {
    const { client, user } = await signUpAndLogin(app);
    expect(await json(await client.get('/api/v1/test/whoami'))).to.deep.equal({ user_id: user.id, session_user_id: user.id, remember_me: false });
  });
});
