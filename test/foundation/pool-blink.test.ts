import { expect } from 'chai';
import type { Pool } from 'pg';
import { openOrm } from '../../api/src/orm.ts';
import { entities } from '../../api/src/entities.ts';
import { eventually } from '../support/wait.ts';
import { startTcpProxy } from '../support/tcp-proxy.ts';

describe('the database pool through a blink in the middle of a transaction', function () {
  this.timeout(60_000);

  it('a transaction whose connection dies gives its client back to the pool (its ROLLBACK cannot run), and the ORM closes: no client is lost for the life of the process', async () => {
    const database = new URL(process.env.DATABASE_URL!);
    const proxy = await startTcpProxy(database.hostname, Number(database.port || 5432));
    const throughProxy = new URL(database);
    throughProxy.port = String(proxy.port);
    const orm = await openOrm({ DATABASE_URL: throughProxy.toString(), DATABASE_POOL_MAX: 3 }, entities);
    try {
      const pool = (await orm.em.getConnection().getNativeClient()) as unknown as Pool & { options: { max: number } };
      expect(pool.options.max, 'the pool keeps DATABASE_POOL_MAX').to.equal(3);
      const failure = await orm.em
        .fork()
        .transactional(async (em) => {
          await em.execute('select 1');
          proxy.cut();
          await em.execute('select 1');
        })
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(failure, 'the transaction fails with the connection').to.be.instanceOf(Error);
      proxy.restore();
      await eventually(async () => (pool.totalCount - pool.idleCount === 0 ? true : undefined), 'no client left checked out', 10_000);
      // the pool still serves: as many transactions at once as it has clients
      await Promise.all([1, 2, 3].map(() => orm.em.fork().transactional((em) => em.execute('select pg_sleep(0.05)'))));
    } finally {
      proxy.restore();
      const closed = await Promise.race([orm.close().then(() => 'closed'), new Promise((resolve) => setTimeout(resolve, 10_000, 'still waiting for a client'))]);
      await proxy.close();
      expect(closed, 'orm.close()').to.equal('closed');
    }
  });
});
