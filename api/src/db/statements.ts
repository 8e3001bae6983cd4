import pg from 'pg';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';

/**
 * Prepared statements for the hot paths (the session's user, the project list, project
 * creation): PostgreSQL parses each once per connection and runs it with bound values,
 * and rows come back as plain objects, with no query building or entity hydration per
 * request. They run on the ORM's own pool, so the pool bound (DATABASE_POOL_MAX) holds.
 */
export interface Statement<Row> {
  readonly name: string;
  /** With `$1…` placeholders, as PostgreSQL takes it. */
  readonly text: string;
  /** The same with `?` placeholders, for an EntityManager inside a transaction. */
  readonly ormText: string;
  /** Phantom: the row type. */
  readonly row?: Row;
}

const names = new Set<string>();

/** Declares a statement once, at module load; its name must be unique (PostgreSQL keys it per connection). */
export function statement<Row>(name: string, sql: string): Statement<Row> {
  if (names.has(name)) throw new Error(`statement ${name} is declared twice`);
  names.add(name);
  let index = 0;
  const text = sql.replace(/\?/g, () => `$${++index}`);
  return { name, text, ormText: sql };
}

// pg's own parsers (timestamps as Date, int8 as string), not the ORM pool's (timestamps as text).
const PLAIN_TYPES = { getTypeParser: pg.types.getTypeParser };

type Values = readonly unknown[];

/** Where statements run: a request's EntityManager (its transaction, if it is in one), or the ORM's pool. */
export type Database = EntityManager | MikroORM;

async function poolOf(database: Database): Promise<pg.Pool> {
  const em = 'getConnection' in database ? database : database.em;
  return em.getConnection().getNativeClient();
}

/**
 * Runs a statement. Inside a transaction of `em` it runs there, through the ORM, so it
 * sees and joins the transaction's work (timestamps then come back as text, as the ORM's
 * pool reads them: give such statements numbers and text only); otherwise on a pooled
 * connection, prepared.
 */
export async function query<Row>(database: Database, statement: Statement<Row>, values: Values): Promise<Row[]> {
  if ('isInTransaction' in database && database.isInTransaction()) return database.execute<Row[]>(statement.ormText, [...values]);
  const pool = await poolOf(database);
  const result = await pool.query({ name: statement.name, text: statement.text, values: [...values], types: PLAIN_TYPES });
  return result.rows as Row[];
}

/** Runs a statement on a connection `transaction` holds. */
export type Run = <Row>(statement: Statement<Row>, values: Values) => Promise<Row[]>;

/**
 * A short transaction of prepared statements on one pooled connection: no ORM work runs
 * between its statements, so the locks it takes are held only as long as the SQL needs.
 */
export async function transaction<T>(database: Database, work: (run: Run) => Promise<T>): Promise<T> {
  const client = await (await poolOf(database)).connect();
  let broken: Error | undefined;
  try {
    await client.query('begin');
    const run: Run = async <Row>(statement: Statement<Row>, values: Values) => {
      const result = await client.query({ name: statement.name, text: statement.text, values: [...values], types: PLAIN_TYPES });
      return result.rows as Row[];
    };
    const outcome = await work(run);
    await client.query('commit');
    return outcome;
  } catch (error) {
    await client.query('rollback').catch((rollbackError: unknown) => {
      // a connection that cannot roll back is not given back to the pool
      broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
    });
    throw error;
  } finally {
    client.release(broken);
  }
}
