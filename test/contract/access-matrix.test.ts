import { expect } from 'chai';
import { CaseMaker, send, type Actor, type FuzzRequest } from '../../bench/fuzz/cases.ts';
import { idParameters, MUTATING_METHODS, operationsOf, type OpenApiDocument, type Operation } from '../../bench/fuzz/operations.ts';
import { Seeded } from '../../bench/fuzz/random.ts';
import { FIXTURES, World } from '../../bench/fuzz/world.ts';
import { json, startTestApp, type TestApp } from '../support/harness.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';

/**
 * Access rules checked on every operation of the served OpenAPI document, so a route
 * added tomorrow is checked too: another user's resource is 403 or 404 (the project
 * event stream 403), no session is 401 unless the document marks the route public, and
 * a mutation without a valid CSRF token is 403. User A's resources come from the fixture
 * registry (bench/fuzz/world.ts), keyed by the id parameter's name.
 */
describe('access matrices generated from the OpenAPI document', function () {
  this.timeout(120_000);
  let app: TestApp;
  let owner: SignedIn;
  let other: SignedIn;
  let document: OpenApiDocument;
  let operations: Operation[];
  let world: World;

  const actorOf = (user: SignedIn): Actor => ({ userId: user.user.id, fetch: user.fetch });
  /** A conforming request carrying A's ids (the same one for every caller of the operation). */
  const requestFor = (operation: Operation): FuzzRequest =>
    new CaseMaker(document, (name) => world.madeId(name, operation)).conforming(operation, new Seeded(7).fork(operation.name));
  const anonymous: Actor = { userId: 'anonymous', fetch: (path, init) => app.fetch(path, init) };
  /** A's cookies without the X-CSRF-Token header (or with the one given). */
  const withoutCsrfHeader = (csrf?: string): Actor => ({
    userId: owner.user.id,
    fetch: (path, init = {}) => {
      const headers = new Headers(init.headers);
      headers.set('Cookie', [...owner.client.cookies].map(([name, value]) => `${name}=${value}`).join('; '));
      if (csrf !== undefined) headers.set('X-CSRF-Token', csrf);
      return app.fetch(path, { ...init, headers });
    },
  });
  const withIds = () => operations.filter((operation) => !operation.public && idParameters(document, operation).length > 0);

  before(async () => {
    app = await startTestApp();
    owner = await signUpAndLogin(app, { tier: 'Viral', credits: 100 });
    other = await signUpAndLogin(app, { tier: 'Viral', credits: 100 });
    document = await json(await app.fetch('/api/v1/openapi.json'));
    operations = operationsOf(document);
    world = new World(actorOf(owner), app.services.orm, document);
    await world.prepare();
  });
  after(() => app?.close());

  it('every path or query id of every operation has a fixture: a route added without one fails here, naming the parameter', () => {
    const missing = operations.flatMap((operation) =>
      idParameters(document, operation).filter((parameter) => !FIXTURES[parameter.name]).map((parameter) => `${operation.name}: ${parameter.in} parameter ${parameter.name} has no fixture in bench/fuzz/world.ts`),
    );
    expect(missing).to.deep.equal([]);
    expect(withIds().length, 'operations with ids').to.be.greaterThan(40);
  });

  it('the document marks public only what api.md Authentication 7 names, login and check-auth, the operational pages, signed playback and the signed webhook', () => {
    const allowed: Record<string, string> = {
      'POST /api/v1/users/': 'signup (rule 7)',
      'POST /api/v1/auth/send-verification': 'rule 7',
      'POST /api/v1/auth/verify-email': 'rule 7',
      'POST /api/v1/auth/forgot-password': 'rule 7',
      'POST /api/v1/auth/reset-password': 'rule 7',
      'POST /api/v1/auth/confirm-email-change': 'rule 7',
      'GET /api/v1/auth/oauth/idp': 'identity-provider start (rule 7)',
      'GET /api/v1/auth/oauth/callback/idp': 'identity-provider callback (rule 7)',
      'POST /api/v1/auth/login': 'makes the session (rule 1)',
      'GET /api/v1/auth/check-auth': 'answers the unauthenticated shape (docs/decisions.md)',
      'GET /api/v1/media/play/{token}': 'authenticated by its signed token (rule 9)',
      'POST /api/v1/payments/webhook': 'authenticated by the Stripe-Signature header',
      'GET /healthz': 'probe',
      'GET /readyz': 'probe',
      'GET /metrics': 'scraped with METRICS_TOKEN',
      'GET /api/v1/openapi.json': 'API reference',
      'GET /api/v1/docs': 'API reference',
      'GET /api/v1/docs/assets/{file}': 'API reference',
    };
    const marked = operations.filter((operation) => operation.public).map((operation) => operation.name);
    expect(marked.filter((name) => !(name in allowed)), 'marked public but no rule allows it').to.deep.equal([]);
    expect(marked).to.include.members(['POST /api/v1/users/', 'POST /api/v1/auth/reset-password', 'GET /api/v1/auth/oauth/callback/idp']);
  });

  it('anonymous → 401 on every operation the document does not mark public (api.md Authentication 7)', async () => {
    const wrong: string[] = [];
    const guarded = operations.filter((operation) => !operation.public);
    expect(guarded.length).to.be.greaterThan(60);
    for (const operation of guarded) {
      const outcome = await send(anonymous, requestFor(operation));
      if (outcome.status !== 401) wrong.push(`${operation.name} → ${outcome.status} ${outcome.text.slice(0, 120)}`);
    }
    expect(wrong).to.deep.equal([]);
  });

  it("another user gets 403 or 404, never 2xx, for the first user's resource on every operation with a path or query id; the owner's own request finds it", async () => {
    const wrong: string[] = [];
    for (const operation of withIds()) {
      const request = requestFor(operation);
      if (!MUTATING_METHODS.has(operation.method)) {
        // The control: A's ids are real and A's own (a mutation is not replayed as A: it would change the world).
        const own = await send(actorOf(owner), request);
        if ([401, 403, 404].includes(own.status)) wrong.push(`${operation.name} as its owner → ${own.status} ${own.text.slice(0, 160)} (the fixture is not the owner's resource)`);
      }
      const outcome = await send(actorOf(other), request);
      if (outcome.status !== 403 && outcome.status !== 404) wrong.push(`${operation.name} as another user → ${outcome.status} ${outcome.text.slice(0, 160)}  [${request.method} ${request.path} ${request.body ?? ''}]`);
    }
    expect(wrong).to.deep.equal([]);
  });

  it("an event stream of another user's project → 403 (api.md Authentication 8), and the owner's opens", async () => {
    const streams: string[] = [];
    const wrong: string[] = [];
    for (const operation of withIds().filter((candidate) => candidate.method === 'GET')) {
      const request = requestFor(operation);
      const own = await send(actorOf(owner), request);
      if (!own.contentType.startsWith('text/event-stream')) continue;
      streams.push(operation.path);
      const outcome = await send(actorOf(other), request);
      if (outcome.status !== 403) wrong.push(`${operation.name} as another user → ${outcome.status} ${outcome.text.slice(0, 160)}`);
    }
    expect(streams).to.include('/api/v1/projects/{project_uuid}/events');
    expect(wrong).to.deep.equal([]);
  });

  it('every mutating operation behind a session refuses a missing, forged or other session’s CSRF token: 403 "CSRF token not found"', async () => {
    const mutating = operations.filter((operation) => !operation.public && MUTATING_METHODS.has(operation.method));
    expect(mutating.length).to.be.greaterThan(40);
    const wrong: string[] = [];
    const tokens: [string, string | undefined][] = [['no header', undefined], ['a forged token', 'f'.repeat(43)], ["another session's token", other.csrf]];
    for (const operation of mutating) {
      const request = requestFor(operation);
      for (const [what, token] of tokens) {
        const outcome = await send(withoutCsrfHeader(token), request);
        const detail = outcome.contentType.includes('json') ? (JSON.parse(outcome.text) as { detail?: string }).detail : outcome.text;
        if (outcome.status !== 403 || detail !== 'CSRF token not found') wrong.push(`${operation.name} with ${what} → ${outcome.status} ${outcome.text.slice(0, 120)}`);
      }
    }
    expect(wrong).to.deep.equal([]);
    // The session survived all of it: nothing above logged A out or changed A's world.
    expect((await owner.client.get('/api/v1/users/me')).status).to.equal(200);
  });

  it('every operation a key may call names the one scope it needs; a key without it → 403 naming it, a key with it passes (scopes declared with the route)', async () => {
    const SCOPES = ['read', 'write', 'billing'] as const;
    const scopeOf = (operation: Operation): string[] | undefined => {
      const requirements = (document.paths[operation.path]![operation.method.toLowerCase()] as { security?: Record<string, string[]>[] }).security;
      return requirements?.find((requirement) => 'apiKey' in requirement)?.apiKey;
    };
    // The scopes as api.md's API key rules give them (before they were declared with each route, a list of path prefixes said so).
    const billing = /^\/api\/v1\/(payments\/|users\/me\/billing|users\/me\/activate-trial|admin\/beta\/)/;
    const expected = (operation: Operation) => (billing.test(operation.path) ? 'billing' : operation.method === 'GET' ? 'read' : 'write');
    const keyed = operations.filter((operation) => scopeOf(operation) !== undefined);
    expect(keyed.length, 'operations keys may call').to.be.greaterThan(60);
    const keyOf = async (scopes: string[]): Promise<Actor> => {
      const created = (await json(await owner.client.post('/api/v1/users/me/api-keys', { name: `only ${scopes.join('+')}`, scopes }))) as { key: string };
      return { userId: owner.user.id, fetch: (path, init = {}) => app.fetch(path, { ...init, headers: { ...Object.fromEntries(new Headers(init.headers)), Authorization: `Bearer ${created.key}` } }) };
    };
    const holding = Object.fromEntries(await Promise.all(SCOPES.map(async (scope) => [scope, await keyOf([scope])] as const)));
    const lacking = Object.fromEntries(await Promise.all(SCOPES.map(async (scope) => [scope, await keyOf(SCOPES.filter((other) => other !== scope))] as const)));
    const wrong: string[] = [];
    for (const operation of keyed) {
      const declared = scopeOf(operation)!;
      if (declared.length !== 1 || declared[0] !== expected(operation)) {
        wrong.push(`${operation.name} declares ${JSON.stringify(declared)}, api.md's rule gives ${expected(operation)}`);
        continue;
      }
      const scope = declared[0] as (typeof SCOPES)[number];
      const request = requestFor(operation);
      const refused = await send(lacking[scope]!, request);
      const challenge = refused.status === 403 && refused.text.includes(scope);
      if (!challenge) wrong.push(`${operation.name} with a key lacking ${scope} → ${refused.status} ${refused.text.slice(0, 120)}`);
      // A mutation is not carried out here (it would change the world the other checks read); a read is.
      if (operation.method === 'GET') {
        const admitted = await send(holding[scope]!, request);
        if ([401, 403].includes(admitted.status)) wrong.push(`${operation.name} with a key holding ${scope} → ${admitted.status} ${admitted.text.slice(0, 120)}`);
      }
    }
    expect(wrong).to.deep.equal([]);
  });
});
