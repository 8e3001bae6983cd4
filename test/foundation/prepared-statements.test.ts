import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { EntityManager } from '@mikro-orm/postgresql';
import { query, statement, transaction } from '../../api/src/db/statements.ts';
import type { ApiRouter } from '../../api/src/http/router.ts';
import { json, startTestApp, type TestApp } from '../support/harness.ts';

const COUNT_PROJECTS = statement<{ count: string }>('test.count_projects', 'select count(*) as count from projects where user_id = ?');
const INSERT_PROJECT = statement<{ id: string }>(
  'test.insert_project',
  `insert into projects (id, user_id, name, status, settings, created_at, updated_at) values (?, ?, 'p', 'created', '{}', now(), now()) returning id`,
);

function probeRoutes(router: ApiRouter): void {
  router.add({
    method: 'get',
    path: '/api/v1/test/request-em',
    summary: "Reads the request's EntityManager twice.",
    tags: ['test'],
    access: 'public',
    responses: { 200: { description: 'Whether both reads gave the same fork' } },
    handler: (ctx) => {
      const first: EntityManager = ctx.state.em;
      ctx.body = { same: first === ctx.state.em, id: first.id };
    },
  });
}

describe('prepared statements and the request EntityManager', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp({}, {}, { extend: probeRoutes });
  });
  after(() => app.close());

  const count = async (em: EntityManager, userId: string) => Number((await query(em, COUNT_PROJECTS, [userId]))[0]!.count);

  it('a statement run in a transaction of the EntityManager sees that transaction (it joins it, not the pool)', async () => {
    const userId = randomUUID();
    const em = app.services.orm.em.fork();
    await em.transactional(async (tx) => {
      await tx.execute(`insert into projects (id, user_id, name, status, settings, created_at, updated_at) values (?, ?, 'p', 'created', '{}', now(), now())`, [randomUUID(), userId]);
      expect(await count(tx, userId), 'inside').to.equal(1);
      expect(await count(app.services.orm.em.fork(), userId), 'another connection does not see it yet').to.equal(0);
    });
    expect(await count(em, userId), 'after the commit').to.equal(1);
  });

  it('a failed statement transaction rolls back what it did, and the pool keeps working', async () => {
    const userId = randomUUID();
    const em = app.services.orm.em.fork();
    const failure = await transaction(em, async (run) => {
      await run(INSERT_PROJECT, [randomUUID(), userId]);
      await run(INSERT_PROJECT, ['not a uuid', userId]);
    }).catch((error: unknown) => error);
    expect(failure).to.be.instanceOf(Error);
    expect(await count(em, userId)).to.equal(0);
    await transaction(em, (run) => run(INSERT_PROJECT, [randomUUID(), userId]));
    expect(await count(em, userId)).to.equal(1);
  });

  it('a statement name is declared once', () => {
    expect(() => statement('test.count_projects', 'select 1')).to.throw(/declared twice/);
  });

  it("each request has one EntityManager fork of its own, the same on every read", async () => {
    const [one, two] = [await json(await app.fetch('/api/v1/test/request-em')), await json(await app.fetch('/api/v1/test/request-em'))];
    expect(one.same && two.same).to.equal(true);
    expect(one.id).to.not.equal(two.id);
    expect([one.id, two.id]).to.not.include(app.services.orm.em.id);
  });
});
