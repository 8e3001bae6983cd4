import { requireAuth, type AppRouter } from '../accounts/guards.ts';
import type { BillingService } from './billing-service.ts';
import { BillingStatusSchema } from './schemas.ts';

/** The billing status and the trial; payments routes come with the payments feature. */
export function registerBillingRoutes(router: AppRouter, billing: BillingService): void {
  router.add({
    method: 'get',
    path: '/api/v1/users/me/billing',
    summary: 'The billing status: tier, subscription, credits, storage and project limits.',
    tags: ['billing'],
    access: 'session',
    scope: 'billing',
    responses: { 200: { description: 'Billing status', schema: BillingStatusSchema } },
    handler: async (ctx, { caller, em }) => {
      ctx.body = await billing.statusFor(em, caller.user);
    },
  });

  router.add({
    method: 'post',
    path: '/api/v1/users/me/activate-trial',
    summary: 'Starts the 7-day trial: Creator tier with 30 AI minutes. Once per account and e-mail address.',
    tags: ['billing'],
    access: 'session',
    scope: 'billing',
    responses: {
      200: { description: 'Billing status with the trial running', schema: BillingStatusSchema },
      409: { description: 'Trial already used (also by a deleted account with this address), or a paid plan is active' },
    },
    handler: async (ctx, { caller, em }) => {
      const { user } = caller;
      await billing.grantTrial(em, user);
      ctx.body = await billing.statusFor(em, user);
    },
  });
}
