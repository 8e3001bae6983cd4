import { expect } from 'chai';
import { chargeStorage, refundStorage } from '../../api/src/accounts/storage-usage.ts';
import { BillingStatusSchema } from '../../api/src/billing/schemas.ts';
import { TIERS, canCreateProject, storageQuotaBytes, maxProjects, tierLimits, watermarkRequired } from '../../api/src/billing/tiers.ts';
import { json, startTestApp, type TestApp } from '../support/harness.ts';
import { mb } from '../../hack/fixtures/units.ts';
import { signUpAndLogin } from '../support/users.ts';

const SPEC_FIELDS = [
  'tier',
  'subscription_status',
  'trial_ends_at',
  'credits',
  'has_active_plan',
  'trial_used',
  'billing_interval',
  'discount_used',
  'is_beta',
  'beta_credits_used',
  'beta_credits_total',
  'beta_renewal_date',
  'storage_used_bytes',
  'storage_quota_bytes',
  'project_count',
  'max_projects',
  'can_use_ai_director',
  'can_watermark_free',
  'can_access_support',
];

/** Ours, documented in docs/decisions.md ("Payments"): a downgrade waiting for the period end. */
const OUR_FIELDS = ['scheduled_change'];

describe('rule 6: the tier table (DESIGN.md, spec Limits)', () => {
  it('max_projects 3/20/100/unlimited, export retention 3/14/30/90, monthly AI minutes 10/120/600/2400', () => {
    expect([TIERS.Free, TIERS.Hobby, TIERS.Creator, TIERS.Viral].map((t) => [t.maxProjects, t.exportRetentionDays, t.monthlyAiMinutes])).to.deep.equal([
      [3, 3, 10],
      [20, 14, 120],
      [100, 30, 600],
      [Infinity, 90, 2400],
    ]);
  });

  it('can_watermark_free false/true/true/true; AI director for Creator and Viral; storage 500 MB, 2 GB, 25 GB, 100 GB (binary)', () => {
    expect(['Free', 'Hobby', 'Creator', 'Viral'].map((tier) => tierLimits(tier as 'Free').canWatermarkFree)).to.deep.equal([false, true, true, true]);
    expect(['Free', 'Hobby', 'Creator', 'Viral'].map((tier) => tierLimits(tier as 'Free').canUseAiDirector)).to.deep.equal([false, false, true, true]);
    expect([storageQuotaBytes('Free'), storageQuotaBytes('Hobby'), storageQuotaBytes('Creator'), storageQuotaBytes('Viral')]).to.deep.equal([mb(500), mb(2 * 1024), mb(25 * 1024), mb(100 * 1024)]);
    expect(watermarkRequired('Free')).to.equal(true);
    expect(maxProjects('Viral')).to.equal(Infinity);
    expect(canCreateProject('Free', 2)).to.equal(true);
    expect(canCreateProject('Free', 3)).to.equal(false);
    expect(canCreateProject('Viral', 10_000)).to.equal(true);
  });
});

describe('rule 6: the billing status object', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(() => app.close());

  it('GET /users/me/billing has every field of the spec, typed', async () => {
    const { client } = await signUpAndLogin(app);
    const response = await client.get('/api/v1/users/me/billing');
    expect(response.status).to.equal(200);
    const status = await json(response);
    expect(Object.keys(status).sort()).to.deep.equal([...SPEC_FIELDS, ...OUR_FIELDS].sort());
    expect(BillingStatusSchema.safeParse(status).success, 'matches the documented schema').to.equal(true);
    expect(status).to.deep.equal({
      tier: 'Free',
      subscription_status: 'none',
      trial_ends_at: null,
      credits: { ai_minutes: { balance: 0, reserved: 0 } },
      has_active_plan: false,
      trial_used: false,
      billing_interval: 'month',
      discount_used: false,
      is_beta: false,
      beta_credits_used: null,
      beta_credits_total: null,
      beta_renewal_date: null,
      scheduled_change: null,
      storage_used_bytes: 0,
      storage_quota_bytes: mb(500),
      project_count: 0,
      max_projects: 3,
      can_use_ai_director: false,
      can_watermark_free: false,
      can_access_support: false,
    });
  });

  it('each paid tier shows its limits; Viral has no project limit (max_projects -1); paid users may reach support', async () => {
    const expected = {
      Hobby: { max_projects: 20, storage_quota_bytes: mb(2 * 1024), can_use_ai_director: false, can_watermark_free: true },
      Creator: { max_projects: 100, storage_quota_bytes: mb(25 * 1024), can_use_ai_director: true, can_watermark_free: true },
      Viral: { max_projects: -1, storage_quota_bytes: mb(100 * 1024), can_use_ai_director: true, can_watermark_free: true },
    } as const;
    for (const [tier, limits] of Object.entries(expected)) {
      const { client } = await signUpAndLogin(app, { tier: tier as keyof typeof expected });
      const status = await json(await client.get('/api/v1/users/me/billing'));
      expect(status, tier).to.include({ tier, subscription_status: 'active', has_active_plan: true, can_access_support: true, ...limits });
    }
  });

  it('beta testers may reach support; a trial alone does not', async () => {
    const trial = await signUpAndLogin(app, { trial: true });
    expect((await json(await trial.client.get('/api/v1/users/me/billing'))).can_access_support).to.equal(false);
    const beta = await signUpAndLogin(app);
    await app.services.orm.em.fork().execute('update subscriptions set is_beta = true, beta_credits_total = 100, beta_period_start = now() where user_id = ?', [beta.user.id]);
    const em = app.services.orm.em.fork();
    await app.services.billing.grantCredits(em, beta.user.id, { reference: 'beta:test', minutes: 100 });
    await app.services.billing.reserveCredits(em, beta.user.id, { reference: 'analysis:beta-test', minutes: 12.5 });
    await app.services.billing.deductCredits(em, beta.user.id, { reference: 'analysis:beta-test', minutes: 12.5 });
    const status = await json(await beta.client.get('/api/v1/users/me/billing'));
    expect(status).to.include({ is_beta: true, can_access_support: true, beta_credits_total: 100, beta_credits_used: 12.5 });
  });

  it('storage_used_bytes follows atomic charges and refunds; project_count comes from the installed counter', async () => {
    const { client, user } = await signUpAndLogin(app);
    const em = app.services.orm.em.fork();
    expect(await chargeStorage(em, user.id, mb(400), storageQuotaBytes('Free'))).to.equal(true);
    expect(await chargeStorage(em, user.id, mb(200), storageQuotaBytes('Free')), 'over the quota').to.equal(false);
    await refundStorage(em, user.id, mb(100));
    app.services.billing.useProjectCounter(async (_em, userId) => (userId === user.id ? 2 : 0));
    try {
      const status = await json(await client.get('/api/v1/users/me/billing'));
      expect(status).to.include({ storage_used_bytes: mb(300), project_count: 2 });
      expect((await json(await client.get('/api/v1/users/me'))).storage_used_bytes).to.equal(mb(300));
    } finally {
      app.services.billing.useProjectCounter(async () => 0);
    }
  });

  it('a user made without a subscription row (seeded by SQL) reads as Free (billing, check-auth) and can start the trial', async () => {
    const { client, user } = await signUpAndLogin(app);
    await app.services.orm.em.fork().execute('delete from subscriptions where user_id = ?', [user.id]);
    expect((await json(await client.get('/api/v1/users/me/billing'))).tier).to.equal('Free');
    // check-auth reads its billing status through the ORM's pool, without a request EntityManager
    await app.services.orm.em.fork().execute('delete from subscriptions where user_id = ?', [user.id]);
    expect((await json(await client.get('/api/v1/auth/check-auth'))).billing.tier).to.equal('Free');
    await app.services.orm.em.fork().execute('delete from subscriptions where user_id = ?', [user.id]);
    expect((await client.post('/api/v1/users/me/activate-trial')).status).to.equal(200);
  });

  it('login and check-auth carry the same billing status object', async () => {
    const account = await signUpAndLogin(app, { trial: true, credits: 5 });
    const login = await account.client.logIn(account.username, account.password);
    const loginBilling = (await json(login)).billing;
    const check = (await json(await account.client.get('/api/v1/auth/check-auth'))).billing;
    const direct = await json(await account.client.get('/api/v1/users/me/billing'));
    expect(loginBilling).to.deep.equal(direct);
    expect(check).to.deep.equal(direct);
    expect(direct.credits.ai_minutes.balance).to.equal(35);
  });
});
