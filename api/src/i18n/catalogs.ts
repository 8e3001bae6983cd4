import { httpMessages } from './request-messages.ts';
import { validationMessages } from './validation-messages.ts';
import { accountMessages } from '../accounts/messages.ts';
import { billingMessages } from '../billing/messages.ts';
import { projectMessages } from '../projects/messages.ts';
import { uploadMessages } from '../media/uploads/messages.ts';
import { mediaLibraryMessages } from '../media/library/messages.ts';
import { mediaEditMessages } from '../media/media-edits/messages.ts';
import { failureMessages } from '../media/failure-messages.ts';
import { jobFailureMessages } from '../jobs/messages.ts';
import { analysisMessages } from '../analysis/messages.ts';
import { presetMessages } from '../presets/messages.ts';
import { timelineMessages } from '../timeline/messages.ts';
import { editMessages } from '../edits/messages.ts';
import { captionMessages } from '../captions/messages.ts';
import { draftMessages } from '../drafts/messages.ts';
import { canvasMessages } from '../canvases/messages.ts';
import { paymentMessages } from '../payments/messages.ts';
import { exportMessages } from '../exports/messages.ts';
import { interchangeMessages } from '../interchange/messages.ts';
import { idempotencyMessages } from '../idempotency/messages.ts';
import { webhookMessages } from '../webhooks/messages.ts';

/**
 * The catalogs: each feature's messages merged, one line per feature.
 * Keys are namespaced by feature (`http.`, `request.`, `auth.`, `media.` …).
 */
const features = [httpMessages, validationMessages, accountMessages, billingMessages, mediaLibraryMessages, projectMessages, uploadMessages, mediaEditMessages, failureMessages, jobFailureMessages, analysisMessages, timelineMessages, editMessages, captionMessages, draftMessages, presetMessages, canvasMessages, exportMessages, paymentMessages, interchangeMessages, idempotencyMessages, webhookMessages] as const;

type FeatureKeys<F> = F extends { en: infer E } ? keyof E : never;
export type MessageKey = FeatureKeys<(typeof features)[number]> & string;
export type Catalog = Record<MessageKey, string>;

function merge(locale: 'en' | 'pt' | 'es'): Catalog {
  return Object.assign({}, ...features.map((feature) => feature[locale])) as Catalog;
}

export const catalogs = { en: merge('en'), pt: merge('pt'), es: merge('es') } as const;
