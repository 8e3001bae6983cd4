import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { BillingService } from '../billing/billing-service.ts';
import type { EventBus } from '../events/bus.ts';
import type { ObjectStorage } from '../storage/storage.ts';
import { artifactCompletion } from '../media/artifact-completion.ts';
import { producedMediaCompletion } from '../media/edits/produced-media-completion.ts';
import { proxyCompletion } from '../media/proxy-completion.ts';
import { JobCompletion } from './completion.ts';
import type { JobService } from './service.ts';

export interface CompletionDeps {
  orm: MikroORM;
  logger: Logger;
  bus: EventBus;
  storage: ObjectStorage;
  /** For handlers that start a follow-up job; resolved lazily, as the job service is built from this completion. */
  jobs: () => JobService;
  /** The services' billing: the storage quota of produced media. */
  billing: BillingService;
}

/**
 * Every program's completion handler, one line per program: the api (local backend)
 * and the operator (kubernetes backend) build the same set here.
 */
export function createJobCompletion(deps: CompletionDeps): JobCompletion {
  const completion = new JobCompletion(deps.orm, deps.logger);
  completion.register('artifact', artifactCompletion(deps));
  completion.register('media-edit', producedMediaCompletion(deps));
  completion.register('media-import', producedMediaCompletion(deps));
  completion.register('proxy', proxyCompletion(deps));
  return completion;
}
