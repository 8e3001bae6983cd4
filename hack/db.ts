import pg from 'pg';

/** Creates the database named in DATABASE_URL when it does not exist yet. */
const target = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/cutroom');
const name = decodeURIComponent(target.pathname.slice(1));
const admin = new URL(target);
admin.pathname = '/postgres';
const client = new pg.Client({ connectionString: admin.toString() });
await client.connect();
try {
  const found = await client.query('select 1 from pg_database where datname = $1', [name]);
  if (found.rowCount === 0) {
    await client.query(`create database ${client.escapeIdentifier(name)}`);
    console.error(`==> created database ${name}`);
  }
} finally {
  await client.end();
}
