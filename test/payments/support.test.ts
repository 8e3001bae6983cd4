import { expect } from 'chai';
import { json } from '../support/harness.ts';
import { SmtpSink } from '../support/smtp.ts';
import { signUpAndLogin } from '../support/users.ts';
import { PRICE, startPaymentsWorld, subscribe, type PaymentsWorld } from './payments-fixtures.ts';

const SUPPORT = '/api/v1/payments/subscription/support-request';
const TEAM = 'priority@cutroom.test';

describe('payments: support-request', () => {
  let world: PaymentsWorld;
  let smtp: SmtpSink;
  before(async () => {
    smtp = await SmtpSink.start();
    world = await startPaymentsWorld({ SMTP_URL: smtp.url, SUPPORT_EMAIL: TEAM, SUPPORT_REQUESTS_PER_WINDOW: '2' });
  });
  after(async () => {
    await world.close();
    await smtp.close();
  });

  it('only when can_access_support: 403 for Free and trial users', async () => {
    const free = await signUpAndLogin(world.app);
    const response = await free.client.post(SUPPORT, { reason: 'bug', message: 'Export stuck' });
    expect(response.status).to.equal(403);
    expect((await json(response)).detail).to.match(/paid subscribers and beta testers/);
    const trial = await signUpAndLogin(world.app, { trial: true });
    expect((await trial.client.post(SUPPORT, { reason: 'bug', message: 'Export stuck' })).status).to.equal(403);
  });

  it('a priority e-mail goes to SUPPORT_EMAIL with tier, credits and paid status, and a confirmation to the user in their language', async () => {
    const user = await signUpAndLogin(world.app, { locale: 'es' });
    await subscribe(world, user, PRICE.creatorMonth);
    const since = smtp.messages.length;
    const response = await user.client.post(SUPPORT, { reason: 'billing_question', message: 'Why two invoices?' });
    expect(response.status).to.equal(200);
    expect(await json(response)).to.deep.equal({ sent: true });

    const team = await smtp.waitFor({ to: TEAM, subject: new RegExp(user.username), since });
    expect(team.subject).to.match(/^\[Priority\]/);
    expect(team.text).to.include('Tier: Creator');
    expect(team.text).to.include('Paid subscriber: yes');
    expect(team.text).to.include('AI minutes: 600 balance, 0 reserved');
    expect(team.text).to.include('Why two invoices?');
    const confirmation = await smtp.waitFor({ to: user.email, subject: /Hemos recibido/, since });
    expect(confirmation.text).to.include('Why two invoices?');
  });

  it('beta testers may send support requests', async () => {
    const admin = await signUpAndLogin(world.app, { superuser: true });
    const tester = await signUpAndLogin(world.app);
    const grant = await admin.client.post('/api/v1/admin/beta/grant', { user_id: tester.user.id, credits: 50, renewal_date: new Date(Date.now() + 30 * 86_400_000).toISOString() });
    expect(grant.status).to.equal(200);
    const since = smtp.messages.length;
    expect((await tester.client.post(SUPPORT, { reason: 'feedback', message: 'Love the captions' })).status).to.equal(200);
    const team = await smtp.waitFor({ to: TEAM, subject: new RegExp(tester.username), since });
    expect(team.text).to.include('Beta tester: yes');
  });

  it('support requests are rate-limited per user: 429 with Retry-After beyond SUPPORT_REQUESTS_PER_WINDOW', async () => {
    const user = await signUpAndLogin(world.app);
    await subscribe(world, user, PRICE.hobbyMonth);
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 3; i++) {
      const response = await user.client.post(SUPPORT, { reason: 'bug', message: `Attempt ${i}` });
      statuses.push(response.status);
      retryAfter = response.headers.get('Retry-After');
    }
    expect(statuses).to.deep.equal([200, 200, 429]);
    expect(Number(retryAfter)).to.be.greaterThan(0);
  });

  it('an empty message → 422', async () => {
    const user = await signUpAndLogin(world.app);
    await subscribe(world, user, PRICE.hobbyMonth);
    expect((await user.client.post(SUPPORT, { reason: 'bug', message: '   ' })).status).to.equal(422);
  });
});
