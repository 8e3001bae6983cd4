// Reports objects in the bucket that no row accounts for (bytes nobody is charged for), with
// the configuration the api uses (DATABASE_URL, S3_*). Exit code 1 when there are any.
// Usage: node hack/storage-reconcile.ts [--json]
import { loadDomainConfig } from '../api/src/config.ts';
import { openOrm } from '../api/src/orm.ts';
import { entities } from '../api/src/entities.ts';
import { reconcileStorage } from '../api/src/media/storage-reconciliation.ts';
import { objectStorageFrom } from '../api/src/storage/storage.ts';

const config = loadDomainConfig();
const orm = await openOrm(config, entities);
try {
  const report = await reconcileStorage(orm.em.fork(), objectStorageFrom(config));
  if (process.argv.includes('--json')) console.log(JSON.stringify(report));
  else {
    for (const object of report.unaccounted.slice(0, 50)) console.log(`${object.size}\t${object.key}`);
    if (report.unaccounted.length > 50) console.log(`… and ${report.unaccounted.length - 50} more`);
    console.log(`${report.objects} objects (${report.bytes} bytes) stored; ${report.unaccounted.length} (${report.unaccountedBytes} bytes) accounted for by no row`);
  }
  process.exitCode = report.unaccounted.length > 0 ? 1 : 0;
} finally {
  await orm.close();
}
