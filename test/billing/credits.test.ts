import { expect } from 'chai';
import { DomainError } from '../../api/src/shared/errors.ts';
import { translate } from '../../api/src/i18n/index.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { createAccount } from '../support/users.ts';

describe('rule 6: the credit ledger (grant, reserve, deduct, release)', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(() => app.close());

  const em = () => app.services.orm.em.fork();
  const billing = () => app.services.billing;

  async function userWith(minutes: number): Promise<string> {
    const { user } = await createAccount(app);
    if (minutes) await billing().grantCredits(em(), user.id, { reference: 'start', minutes });
    return user.id;
  }

  it('balance and reserved are derived from the ledger rows, never stored', async () => {
    const userId = await userWith(30);
    await billing().reserveCredits(em(), userId, { reference: 'analysis:a', minutes: 4.2 });
    expect(await billing().creditsOf(em(), userId)).to.deep.equal({ balance: 30, reserved: 4.2, available: 25.8 });
    const rows = await em().execute<{ kind: string; minutes: string }[]>('select kind, minutes from credit_entries where user_id = ? order by created_at, kind', [userId]);
    expect(rows.map((row) => [row.kind, Number(row.minutes)])).to.deep.equal([
      ['grant', 30],
      ['reserve', 4.2],
    ]);
    const columns = await em().execute<{ column_name: string }[]>(
      `select column_name from information_schema.columns where table_name in ('users', 'subscriptions') and column_name ~ '(balance|reserved|ai_minutes)'`,
    );
    expect(columns, 'no stored balance').to.deep.equal([]);
  });

  it('deduct charges what the job used and settles its reservation', async () => {
    const userId = await userWith(30);
    await billing().reserveCredits(em(), userId, { reference: 'analysis:b', minutes: 5 });
    expect(await billing().deductCredits(em(), userId, { reference: 'analysis:b', minutes: 3.4 })).to.equal(true);
    expect(await billing().creditsOf(em(), userId)).to.deep.equal({ balance: 26.6, reserved: 0, available: 26.6 });
  });

  it('release gives a failed job its reservation back', async () => {
    const userId = await userWith(30);
    await billing().reserveCredits(em(), userId, { reference: 'analysis:c', minutes: 5 });
    expect(await billing().releaseCredits(em(), userId, { reference: 'analysis:c' })).to.equal(true);
    expect(await billing().creditsOf(em(), userId)).to.deep.equal({ balance: 30, reserved: 0, available: 30 });
  });

  it('settlement is idempotent per reference: a second deduct or a late release changes nothing', async () => {
    const userId = await userWith(30);
    await billing().reserveCredits(em(), userId, { reference: 'analysis:d', minutes: 5 });
    expect(await billing().reserveCredits(em(), userId, { reference: 'analysis:d', minutes: 5 }), 'reserve again').to.equal(false);
    expect(await billing().deductCredits(em(), userId, { reference: 'analysis:d', minutes: 5 })).to.equal(true);
    expect(await billing().deductCredits(em(), userId, { reference: 'analysis:d', minutes: 5 })).to.equal(false);
    expect(await billing().releaseCredits(em(), userId, { reference: 'analysis:d' })).to.equal(false);
    expect(await billing().creditsOf(em(), userId)).to.deep.equal({ balance: 25, reserved: 0, available: 25 });
    expect(await billing().grantCredits(em(), userId, { reference: 'start', minutes: 30 }), 'grant again').to.equal(false);
  });

  it('concurrent settlements of one job settle it once', async () => {
    const userId = await userWith(30);
    await billing().reserveCredits(em(), userId, { reference: 'analysis:e', minutes: 6 });
    const results = await Promise.all([
      billing().deductCredits(em(), userId, { reference: 'analysis:e', minutes: 6 }),
      billing().deductCredits(em(), userId, { reference: 'analysis:e', minutes: 6 }),
      billing().releaseCredits(em(), userId, { reference: 'analysis:e' }),
    ]);
    expect(results.filter(Boolean)).to.have.lengthOf(1);
    const { reserved } = await billing().creditsOf(em(), userId);
    expect(reserved).to.equal(0);
  });

  it("a reservation beyond the available minutes is 402 naming the minutes needed and the billing status's balance, with the reserved and available minutes said apart", async () => {
    const userId = await userWith(10);
    await billing().reserveCredits(em(), userId, { reference: 'analysis:f', minutes: 8 });
    try {
      await billing().reserveCredits(em(), userId, { reference: 'analysis:g', minutes: 2.5 });
      expect.fail('expected 402');
    } catch (error) {
      expect(error).to.be.instanceOf(DomainError);
      const appError = error as DomainError;
      expect(appError.kind).to.equal('insufficient_credits');
      expect(translate('en', appError.key, appError.params)).to.equal('This needs 2.5 AI minutes; your balance is 10, of which 8 are reserved by analyses in progress, so 2 are available.');
    }
  });

  it('concurrent reservations cannot spend the same minutes twice', async () => {
    const userId = await userWith(10);
    const attempts = await Promise.allSettled(
      [1, 2, 3, 4].map((n) => billing().reserveCredits(em(), userId, { reference: `analysis:h${n}`, minutes: 4 })),
    );
    expect(attempts.filter((a) => a.status === 'fulfilled')).to.have.lengthOf(2);
    expect((await billing().creditsOf(em(), userId)).reserved).to.equal(8);
  });

  it('credits are rounded up to a tenth of a minute', async () => {
    const userId = await userWith(0);
    await billing().grantCredits(em(), userId, { reference: 'odd', minutes: 1.01 });
    expect((await billing().creditsOf(em(), userId)).balance).to.equal(1.1);
  });
});
