import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { EventBus } from '../events/bus.ts';
import type { ObjectStorage } from '../storage/storage.ts';
import { artifactCompletion } from '../media/artifact-completion.ts';
import { JobCompletion } from './completion.ts';

export interface CompletionDeps {
  orm: MikroORM;
  logger: Logger;
  bus: EventBus;
  storage: ObjectStorage;
}

/**
 * Every program's completion handler, one line per program: the api (local backend)
 * and the operator (kubernetes backend) build the same set here.
 */
export function createJobCompletion(deps: CompletionDeps): JobCompletion {
  const completion = new JobCompletion(deps.orm, deps.logger);
  completion.register('artifact', artifactCompletion(deps));
  return completion;
}
