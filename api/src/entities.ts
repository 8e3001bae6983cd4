import type { EntitySchema } from '@mikro-orm/core';
import { DeletedAccount, User, UserIdentity } from './accounts/entities.ts';
import { ApiKey } from './api-keys/entities.ts';
import { CreditEntry, Subscription } from './billing/entities.ts';
import { Job } from './jobs/entities.ts';
import { MediaFile, MediaItem } from './media/entities.ts';
import { Project } from './projects/entities.ts';
import { Canvas, CanvasMedia } from './canvases/entities.ts';
import { MediaGroup, MediaGroupMembership } from './media-groups/entities.ts';
import { AnalysisRun } from './analysis/entities.ts';
import { Edit } from './edits/entities.ts';
import { AnalysisPreset, PreviewPreset } from './presets/entities.ts';
import { CaptionLine } from './captions/entities.ts';
import { Draft } from './drafts/entities.ts';
import { CancellationFeedback, DueAction, PaymentCustomer, PaymentEvent } from './payments/entities.ts';
import { Export } from './exports/entities.ts';
import { IdempotencyKey } from './idempotency/entities.ts';
import { WebhookDelivery, WebhookEndpoint } from './webhooks/entities.ts';

/** Every entity of the service, one line per feature. */
export const entities: EntitySchema[] = [
  User,
  UserIdentity,
  DeletedAccount,
  ApiKey,
  Subscription,
  CreditEntry,
  Job,
  MediaFile,
  MediaItem,
  Project,
  Canvas,
  CanvasMedia,
  MediaGroup, MediaGroupMembership,
  AnalysisRun,
  Edit,
  AnalysisPreset, PreviewPreset,
  CaptionLine,
  Draft,
  PaymentCustomer, PaymentEvent, DueAction, CancellationFeedback,
  Export,
  IdempotencyKey,
  WebhookEndpoint, WebhookDelivery,
];
