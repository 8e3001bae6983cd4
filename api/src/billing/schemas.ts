import { z } from 'zod';
import { subscriptionStatuses } from './entities.ts';
import { tierNames } from './tiers.ts';

/** The billing status object (GET /users/me/billing, and in login and check-auth). */
export const BillingStatusSchema = z
  .object({
    tier: z.enum(tierNames),
    subscription_status: z.enum(subscriptionStatuses),
    trial_ends_at: z.iso.datetime().nullable(),
    credits: z.object({ ai_minutes: z.object({ balance: z.number(), reserved: z.number() }) }),
    has_active_plan: z.boolean().describe('A paid plan or a running trial.'),
    trial_used: z.boolean(),
    billing_interval: z.string(),
    discount_used: z.boolean(),
    is_beta: z.boolean(),
    beta_credits_used: z.number().nullable(),
    beta_credits_total: z.number().nullable(),
    beta_renewal_date: z.iso.datetime().nullable(),
    scheduled_change: z
      .object({ tier: z.enum(tierNames), billing_interval: z.string(), effective_at: z.iso.datetime() })
      .nullable()
      .describe('A downgrade waiting for the end of the billing period (schedule-downgrade); the tier above holds until effective_at.'),
    storage_used_bytes: z.int(),
    storage_quota_bytes: z.int(),
    project_count: z.int(),
    max_projects: z.int().describe('-1 means no limit.'),
    can_use_ai_director: z.boolean(),
    can_watermark_free: z.boolean(),
    can_access_support: z.boolean().describe('Paid subscribers and beta testers.'),
  })
  .meta({ id: 'BillingStatus' });
