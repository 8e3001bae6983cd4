import { expect } from 'chai';
import { operationRandom, runCampaign } from '../../bench/fuzz/campaign.ts';
import { CaseMaker } from '../../bench/fuzz/cases.ts';
import { operationsOf, type OpenApiDocument } from '../../bench/fuzz/operations.ts';
import { seedFromEnv } from '../../bench/fuzz/random.ts';
import { World } from '../../bench/fuzz/world.ts';
import { startPaymentsWorld, type PaymentsWorld } from '../payments/payments-fixtures.ts';
import { json, type TestApp } from '../support/harness.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';

/** Cases per operation in the suite; bench/fuzz runs thousands. FUZZ_ROUNDS raises it for a local hunt. */
const ROUNDS = Number(process.env.FUZZ_ROUNDS ?? 3);

describe('fuzz: requests that break the OpenAPI document never get a 5xx', function () {
  this.timeout(120_000);
  let payments: PaymentsWorld;
  let app: TestApp;
  let owner: SignedIn;
  let document: OpenApiDocument;
  let world: World;

  before(async () => {
    // Payments configured against the Stripe double, as deployed. Trusted X-Forwarded-For:
    // each case comes from an address of its own (per-IP limits, login lockouts).
    payments = await startPaymentsWorld({ TRUST_PROXY: 'true' });
    app = payments.app;
    owner = await signUpAndLogin(app, { tier: 'Viral', credits: 100 });
    document = await json(await app.fetch('/api/v1/openapi.json'));
    world = new World({ userId: owner.user.id, fetch: owner.fetch }, app.services.orm, document);
    await world.prepare();
  });
  after(() => payments?.close());

  it('a seed makes the same cases in every run (FUZZ_SEED replays a finding); another seed makes others', () => {
    const operations = operationsOf(document);
    const maker = new CaseMaker(document, (name) => world.madeId(name));
    const casesOf = (seed: number) =>
      operations.flatMap((operation) => {
        const random = operationRandom(seed, operation);
        return [0, 1, 2].map(() => JSON.stringify(maker.make(operation, random).request));
      });
    expect(casesOf(42)).to.deep.equal(casesOf(42));
    const other = casesOf(43);
    expect(casesOf(42).filter((request, index) => request !== other[index]).length).to.be.greaterThan(operations.length);
  });

  it(`${ROUNDS} seeded cases per operation, authenticated with CSRF: 0 answers ≥ 500 (FUZZ_SEED replays the printed seed)`, async () => {
    const seed = seedFromEnv();
    console.log(`      fuzz seed ${seed} (FUZZ_SEED=${seed} replays this run)`);
    const result = await runCampaign({
      document,
      world,
      owner: { userId: owner.user.id, fetch: owner.fetch },
      renewSession: async () => {
        await owner.client.logIn(owner.username, owner.password);
      },
      seed,
      rounds: ROUNDS,
    });
    expect(result.cases).to.equal(ROUNDS * operationsOf(document).length);
    // The cases reached past the edge: some were refused as input, some were accepted.
    const statuses = [...result.statuses.keys()];
    expect(statuses.some((status) => status === 400 || status === 422), `statuses ${statuses}`).to.equal(true);
    expect(statuses.some((status) => status >= 200 && status < 300), `statuses ${statuses}`).to.equal(true);
    const found = result.findings.map((finding) => finding.description);
    expect(found.length, `seed ${seed}, answers ≥ 500:\n${found.join('\n')}`).to.equal(0);
  });
});
