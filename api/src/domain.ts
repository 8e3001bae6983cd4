import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { Redis } from 'ioredis';
import { BillingService } from './billing/billing-service.ts';
import { EventBus } from './events/bus.ts';
import { ProgressRelay } from './events/progress-relay.ts';
import { renderCompletion, renderProgress } from './exports/completion.ts';
import { JobCompletion, type CompletionHandlers } from './jobs/completion.ts';
import { artifactCompletion } from './media/artifact-completion.ts';
import { producedMediaCompletion } from './media/media-edits/produced-media-completion.ts';
import { proxyCompletion } from './media/proxy-completion.ts';
import { analysisCompletion, analysisProgress } from './analysis/completion.ts';
import type { Clock } from './shared/clock.ts';
import type { ObjectStorage } from './storage/storage.ts';

/** What the domain needs from the process that hosts it (the api or the operator). */
export interface DomainInputs {
  orm: MikroORM;
  redis: Redis;
  storage: ObjectStorage;
  logger: Logger;
  clock: Clock;
  redisKeyPrefix: string;
  defaultJobTimeoutSeconds: number;
}

export interface Domain {
  billing: BillingService;
  bus: EventBus;
  completion: JobCompletion;
  /** NOTIFY channel of the job outbox. */
  outboxChannel: string;
}

/**
 * The domain services both processes run: the api (requests, local jobs) and the operator
 * (completions of Kubernetes jobs) build it here, so they settle jobs the same way. The
 * completion registry is total: every requestable program's feature hands in its handler.
 */
export function createDomain(inputs: DomainInputs): Domain {
  const { orm, logger, storage, clock } = inputs;
  const billing = new BillingService({ clock });
  const bus = new EventBus(inputs.redis, inputs.redisKeyPrefix);
  const outboxChannel = `${inputs.redisKeyPrefix}jobs`;
  const media = { orm, logger, storage, billing };
  const handlers: CompletionHandlers = {
    artifact: artifactCompletion(media),
    'media-edit': producedMediaCompletion(media),
    'media-import': producedMediaCompletion(media),
    proxy: proxyCompletion(media),
    analyze: analysisCompletion({ storage, logger }),
    render: renderCompletion({ storage, logger, publish: (projectId, event) => bus.publishToProject(projectId, event) }),
  };
  const exportOwnerLocale = async (exportId: string) => {
    const [row] = await orm.em.getConnection().execute<{ locale: string }[]>(`select u.locale from exports e join users u on u.id = e.user_id where e.id = ?`, [exportId]);
    return row?.locale ?? null;
  };
  // Progress of both backends reaches the project stream here; each feature names its event.
  const progressRelay = new ProgressRelay({
    redis: inputs.redis,
    bus,
    policies: {
      analyze: analysisProgress,
      render: renderProgress(exportOwnerLocale),
    },
  });
  const completion = new JobCompletion({ orm, logger, billing, handlers, defaultTimeoutSeconds: inputs.defaultJobTimeoutSeconds, outboxChannel, progressRelay, publisher: bus });
  return { billing, bus, completion, outboxChannel };
}
