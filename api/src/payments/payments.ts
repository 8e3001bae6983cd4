import type { BetaProgram } from './beta.ts';
import type { DueActions } from './due-actions.ts';
import type { PriceTable } from './price-table.ts';
import type { PlanChanges } from './service.ts';
import type { SupportRequests } from './support.ts';
import type { StripeWebhooks } from './webhooks.ts';

/** The payments feature's services, built from config. */
export interface Payments {
  plans: PlanChanges;
  webhooks: StripeWebhooks;
  support: SupportRequests;
  beta: BetaProgram;
  dueActions: DueActions;
  prices: PriceTable;
}
