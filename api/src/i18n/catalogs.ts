import type { MessageKey } from './message-key.ts';
import type { Locale } from './locales.ts';
import { httpMessages } from './request-messages.ts';
import { validationMessages } from './validation-messages.ts';
import { accountMessages } from './messages/accounts.ts';
import { billingMessages } from './messages/billing.ts';
import { projectMessages } from './messages/projects.ts';
import { uploadMessages } from './messages/media-uploads.ts';
import { mediaLibraryMessages } from './messages/media-library.ts';
import { mediaEditMessages } from './messages/media-edits.ts';
import { jobTexts } from './messages/job-texts.ts';
import { analysisMessages } from './messages/analysis.ts';
import { presetMessages } from './messages/presets.ts';
import { timelineMessages } from './messages/timeline.ts';
import { editMessages } from './messages/edits.ts';
import { captionMessages } from './messages/captions.ts';
import { draftMessages } from './messages/drafts.ts';
import { canvasMessages } from './messages/canvases.ts';
import { paymentMessages } from './messages/payments.ts';
import { exportMessages } from './messages/exports.ts';
import { interchangeMessages } from './messages/interchange.ts';
import { idempotencyMessages } from './messages/idempotency.ts';
import { webhookMessages } from './messages/webhooks.ts';

/**
 * The catalogs: each feature's messages merged, one line per feature.
 * Keys are namespaced by feature (`http.`, `request.`, `auth.`, `media.` …).
 */
const features = [httpMessages, validationMessages, accountMessages, billingMessages, mediaLibraryMessages, projectMessages, uploadMessages, mediaEditMessages, jobTexts, analysisMessages, timelineMessages, editMessages, captionMessages, draftMessages, presetMessages, canvasMessages, exportMessages, paymentMessages, interchangeMessages, idempotencyMessages, webhookMessages] as const;

type FeatureKeys<F> = F extends { en: infer E } ? keyof E : never;
type CatalogKey = FeatureKeys<(typeof features)[number]> & string;
export type Catalog = Record<MessageKey, string>;

// Every key of the catalogs becomes a MessageKey (message-key.ts), which code below the
// catalogs names without importing every feature's messages.
declare module './message-key.ts' {
  interface MessageKeys extends Record<CatalogKey, true> {}
}

function merge(locale: Locale): Catalog {
  return Object.assign({}, ...features.map((feature) => feature[locale])) as Catalog;
}

export const catalogs = { en: merge('en'), pt: merge('pt'), es: merge('es') } as const satisfies Record<Locale, Catalog>;
