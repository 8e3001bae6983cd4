import { expect } from 'chai';
import { json, startTestApp, type TestApp } from '../support/harness.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';
import { WebhookDelivery, WebhookEndpoint } from '../../api/src/webhooks/entities.ts';
import { refusedAddress, type Resolver } from '../../api/src/webhooks/targets.ts';
import { webhookEventTypes } from '../../api/src/webhooks/payloads.ts';

const WEBHOOKS = '/api/v1/users/me/webhooks';

/** A fixed table of names, as DNS would answer them. */
function tableResolver(table: Record<string, string[]>): Resolver {
  return async (hostname) => {
    const addresses = table[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}

describe('webhook endpoints: /users/me/webhooks', () => {
  let app: TestApp;

  before(async () => {
    app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_MAX_ENDPOINTS_PER_USER: '3' });
  });
  after(() => app.close());

  it('POST → 201 with a whsec_ secret of 32 bytes, shown only then; GET lists and reads it without the secret', async () => {
    const user = await signUpAndLogin(app);
    const response = await user.client.post(WEBHOOKS, { url: 'http://127.0.0.1:9/hooks', event_types: ['media.ready', 'export.completed'], description: 'CMS' });
    expect(response.status).to.equal(201);
    const created = await json(response);
    expect(created).to.deep.include({ url: 'http://127.0.0.1:9/hooks', event_types: ['media.ready', 'export.completed'], description: 'CMS', enabled: true, disabled_reason: null, failing_since: null });
    expect(created.secret).to.match(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(created.secret.slice(6), 'base64')).to.have.length(32);
    const { secret, ...shown } = created;
    expect(secret).to.be.a('string');
    expect(await json(await user.client.get(WEBHOOKS))).to.deep.equal({ data: [shown] });
    expect(await json(await user.client.get(`${WEBHOOKS}/${created.id}`))).to.deep.equal(shown);
  });

  it('a missing or unknown event type, an unknown key, a non-http URL or a description over 500 → 422', async () => {
    const user = await signUpAndLogin(app);
    const refused = [
      { url: 'http://127.0.0.1:9/' },
      { url: 'http://127.0.0.1:9/', event_types: [] },
      { url: 'http://127.0.0.1:9/', event_types: ['media_ready'] },
      { url: 'http://127.0.0.1:9/', event_types: ['media.ready'], colour: 'red' },
      { url: 'ftp://127.0.0.1/', event_types: ['media.ready'] },
      { url: 'not a url', event_types: ['media.ready'] },
      { url: 'http://127.0.0.1:9/', event_types: ['media.ready'], description: 'x'.repeat(501) },
    ];
    for (const body of refused) {
      const response = await user.client.post(WEBHOOKS, body);
      expect(response.status, JSON.stringify(body).slice(0, 100)).to.equal(422);
    }
  });

  it('PATCH changes fields; enabling a disabled endpoint clears its failure state; DELETE → 204, then 404', async () => {
    const user = await signUpAndLogin(app);
    const created = await json(await user.client.post(WEBHOOKS, { url: 'http://127.0.0.1:9/a', event_types: ['media.ready'] }));
    await app.services.orm.em.fork().nativeUpdate(WebhookEndpoint, { id: created.id }, { enabled: false, disabledReason: 'failing', failingSince: new Date() });
    const patched = await json(await user.client.patch(`${WEBHOOKS}/${created.id}`, { enabled: true, event_types: ['export.failed'], description: 'renamed' }));
    expect(patched).to.deep.include({ enabled: true, disabled_reason: null, failing_since: null, event_types: ['export.failed'], description: 'renamed', url: 'http://127.0.0.1:9/a' });
    expect((await user.client.delete(`${WEBHOOKS}/${created.id}`)).status).to.equal(204);
    expect((await user.client.get(`${WEBHOOKS}/${created.id}`)).status).to.equal(404);
  });

  it("another user's endpoint answers 404 to every route", async () => {
    const [alice, bob] = await Promise.all([signUpAndLogin(app), signUpAndLogin(app)]);
    const created = await json(await alice.client.post(WEBHOOKS, { url: 'http://127.0.0.1:9/a', event_types: ['media.ready'] }));
    const item = `${WEBHOOKS}/${created.id}`;
    expect((await bob.client.get(item)).status).to.equal(404);
    expect((await bob.client.patch(item, { enabled: false })).status).to.equal(404);
    expect((await bob.client.delete(item)).status).to.equal(404);
    expect((await bob.client.post(`${item}/rotate-secret`)).status).to.equal(404);
    expect((await bob.client.get(`${item}/deliveries`)).status).to.equal(404);
    expect((await alice.client.get(item)).status).to.equal(200);
  });

  it('more endpoints than WEBHOOK_MAX_ENDPOINTS_PER_USER, even at once → 403 WebhookLimitReached', async () => {
    const user = await signUpAndLogin(app);
    const responses = await Promise.all(Array.from({ length: 6 }, (_, i) => user.client.post(WEBHOOKS, { url: `http://127.0.0.1:9/${i}`, event_types: ['media.ready'] })));
    expect(responses.map((r) => r.status).sort()).to.deep.equal([201, 201, 201, 403, 403, 403]);
    const refused = responses.find((r) => r.status === 403)!;
    expect(await json(refused)).to.include({ code: 'WebhookLimitReached' });
    expect((await json(await user.client.get(WEBHOOKS))).data).to.have.length(3);
  });

  it('rotate-secret → a new secret; the old one is kept to sign beside it for a day', async () => {
    const user = await signUpAndLogin(app);
    const created = await json(await user.client.post(WEBHOOKS, { url: 'http://127.0.0.1:9/a', event_types: ['media.ready'] }));
    const rotated = await json(await user.client.post(`${WEBHOOKS}/${created.id}/rotate-secret`));
    expect(rotated.secret).to.match(/^whsec_/).and.not.equal(created.secret);
    const row = await app.services.orm.em.fork().findOneOrFail(WebhookEndpoint, created.id);
    expect(row.previousSecret).to.equal(created.secret);
    expect(row.previousSecretExpiresAt!.getTime() - Date.now()).to.be.within(23.9 * 3600_000, 24 * 3600_000);
  });

  it('the OpenAPI document lists every event payload under webhooks, with the Standard Webhooks headers', async () => {
    const document = await json(await app.fetch('/api/v1/openapi.json'));
    expect(Object.keys(document.webhooks).sort()).to.deep.equal([...webhookEventTypes].sort());
    const mediaReady = document.webhooks['media.ready'].post;
    expect(mediaReady.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).to.have.members(['header:webhook-id', 'header:webhook-timestamp', 'header:webhook-signature']);
    const schema = document.components.schemas[mediaReady.requestBody.content['application/json'].schema.$ref.split('/').pop()];
    expect(schema.properties.type.enum).to.deep.equal(['media.ready']);
    expect(Object.keys(schema.properties.data.properties)).to.have.members(['media_item_uuid', 'media_file_uuid', 'project_uuid', 'display_name', 'proxy_status']);
  });

  it('deleting the account deletes its endpoints and their pending deliveries', async () => {
    const user = await signUpAndLogin(app);
    const created = await json(await user.client.post(WEBHOOKS, { url: 'http://127.0.0.1:9/a', event_types: ['credits.updated'] }));
    // the worker must not send it first: the endpoint's target does not listen, so the row stays pending
    await app.services.orm.em.fork().transactional((em) => app.services.billing.grantCredits(em, user.user.id, { reference: 'gift', minutes: 5 }));
    const em = app.services.orm.em.fork();
    expect(await em.count(WebhookDelivery, { endpoint: created.id })).to.equal(1);
    expect((await user.client.delete('/api/v1/users/me', { password: user.password })).status).to.equal(204);
    expect(await em.count(WebhookEndpoint, { userId: user.user.id })).to.equal(0);
    expect(await em.count(WebhookDelivery, { endpoint: created.id })).to.equal(0);
  });
});

describe('webhook targets: private addresses refused at registration (WEBHOOK_ALLOW_PRIVATE_TARGETS unset)', () => {
  let app: TestApp;
  let user: SignedIn;

  before(async () => {
    const resolver = tableResolver({
      'public.example': ['93.184.215.14'],
      'internal.example': ['93.184.215.14', '192.168.1.10'],
      'meta.example': ['169.254.169.254'],
      'compatible.example': ['::a9fe:a9fe'],
      'public6.example': ['2606:4700:4700::1111'],
    });
    app = await startTestApp({}, { webhookResolver: resolver });
    user = await signUpAndLogin(app);
  });
  after(() => app.close());

  const refusedTargets = [
    'http://127.0.0.1:8080/',
    'http://localhost/',
    'http://api.localhost/',
    'http://10.0.0.5/',
    'http://172.16.3.4/',
    'http://192.168.0.1/',
    'http://169.254.169.254/latest/meta-data/',
    'http://100.64.0.1/',
    'http://0.0.0.0/',
    'http://[::1]/',
    'http://[fd00::1]/',
    'http://[fe80::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:a9fe:a9fe]/',
    'http://internal.example/',
    'http://meta.example/',
    'http://nowhere.example/',
    'http://user:pass@public.example/',
    // attack (issue 41 L1): IPv4-compatible IPv6 (::/96) carrying loopback and the metadata address
    'http://[::127.0.0.1]/',
    'http://[::a9fe:a9fe]/',
    'http://compatible.example/',
  ];

  for (const url of refusedTargets) {
    it(`${url} → 422 WebhookTargetRefused`, async () => {
      const response = await user.client.post(WEBHOOKS, { url, event_types: ['media.ready'] });
      expect(response.status).to.equal(422);
      expect(await json(response)).to.include({ code: 'WebhookTargetRefused' });
    });
  }

  it('a global unicast address by name or literal, IPv4 or IPv6 → 201', async () => {
    for (const url of ['http://[2606:4700:4700::1111]/hooks', 'https://public6.example/hooks', 'http://93.184.215.14/hooks']) {
      const response = await user.client.post(WEBHOOKS, { url, event_types: ['media.ready'] });
      expect(response.status, url).to.equal(201);
      await user.client.delete(`${WEBHOOKS}/${(await json(response)).id}`);
    }
  });

  it('attack: IPv4 embedded in IPv6 in any form, and every IPv6 address outside 2000::/3, is refused; only global unicast passes', () => {
    const refused = [
      '::127.0.0.1', '::a9fe:a9fe', '::0808:0808', '::ffff:8.8.8.8', '::ffff:127.0.0.1', '::ffff:0:7f00:1', '64:ff9b::7f00:1', '64:ff9b:1::a9fe:a9fe',
      '2002:7f00:1::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001:db8::1', '2001:2::1', '100::1', 'fec0::1', 'fc00::1', 'fe80::1', 'ff02::1', '::1', '::', '4000::1', 'e000::1',
      '0.0.0.0', '127.0.0.1', '10.1.2.3', '172.31.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '192.0.0.8', '192.0.2.1', '198.18.0.1', '198.51.100.1', '203.0.113.1', '224.0.0.1', '240.0.0.1', '255.255.255.255',
    ];
    for (const address of refused) expect(refusedAddress(address), address).to.be.a('string');
    for (const address of ['8.8.8.8', '93.184.215.14', '1.1.1.1', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e']) expect(refusedAddress(address), address).to.equal(undefined);
  });

  it('a name that resolves only to public addresses → 201; changing it to a private one → 422', async () => {
    const created = await user.client.post(WEBHOOKS, { url: 'https://public.example/hooks', event_types: ['media.ready'] });
    expect(created.status).to.equal(201);
    const { id } = await json(created);
    const patched = await user.client.patch(`${WEBHOOKS}/${id}`, { url: 'http://10.1.2.3/' });
    expect(patched.status).to.equal(422);
    expect(await json(patched)).to.include({ code: 'WebhookTargetRefused' });
  });
});
