import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import Router from '@koa/router';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { ApiRouter, type Guards } from '../../api/src/http/router.ts';
import type { AppState } from '../../api/src/http/state.ts';

/**
 * The api matches a request only against the routes of its path's group (its first three
 * segments, api/src/http/router.ts). These tests hold it to what one @koa/router holding
 * every route would do: the same route, the same 405 and 404, for every route's path and
 * its near misses (the other trailing slash, another letter case, a segment more).
 */
describe('routes matched by group', function () {
  this.timeout(120_000);
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(() => app.close());

  /** What a single router with every route, in the order added, dispatches: the route's template, else 405 or 404. */
  function expected(flat: Router<AppState>, path: string, method: string): { route: string } | { status: number } {
    const match = flat.match(path, method);
    const layer = match.pathAndMethod.find((candidate) => candidate.methods.length > 0);
    if (match.route && layer) return { route: String(layer.path).replace(/:(\w+)/g, '{$1}') };
    if (match.path.length > 0) return { status: method === 'OPTIONS' ? 200 : 405 };
    return { status: 404 };
  }

  it("every route's path and its near misses reach the route (or the 405, or the 404) one router with every route would give", async () => {
    const flat = new Router<AppState>({ sensitive: true });
    for (const layer of app.router.stack) flat.register(String(layer.path), layer.methods, [() => {}]);
    const probes = new Set<string>();
    for (const layer of app.router.stack) {
      const path = String(layer.path).replace(/:\w+/g, () => randomUUID());
      const toggled = path.endsWith('/') ? path.slice(0, -1) : `${path}/`;
      const recased = path.replace(/[a-z](?=[a-z-]*\/?$)/, (letter) => letter.toUpperCase());
      const other = ['DELETE', 'PATCH', 'PUT', 'POST', 'GET'].find((method) => !layer.methods.includes(method))!;
      for (const variant of [path, toggled, recased, `${path.replace(/\/$/, '')}/zz-none`]) {
        for (const method of [...layer.methods.filter((name) => name !== 'HEAD'), other]) probes.add(`${method} ${variant}`);
      }
      probes.add(`OPTIONS ${path}`);
    }
    expect(probes.size).to.be.greaterThan(500);
    const mismatches: string[] = [];
    for (const probe of probes) {
      const [method, path] = probe.split(' ') as [string, string];
      // Refused before any handler runs: an Idempotency-Key where none is taken (400), or no caller (401).
      const response = await app.fetch(path, { method, headers: { 'Idempotency-Key': 'route-groups' } });
      await response.arrayBuffer();
      const requestId = response.headers.get('X-Request-Id');
      const line = app.logs.find((entry) => entry.request_id === requestId);
      const want = expected(flat, path, method);
      const got = 'route' in want ? line?.route : response.status;
      if ('route' in want ? got !== want.route || [404, 405].includes(response.status) : got !== want.status || line?.route !== 'unmatched') {
        mismatches.push(`${probe}: ${JSON.stringify(want)}, got ${response.status} on ${String(line?.route)}`);
      }
    }
    expect(mismatches).to.deep.equal([]);
  });

  it('a route with a parameter among its first three segments is refused when added (it would match paths of every group)', () => {
    const pass: Guards = { caller: async () => undefined, sessionCaller: async () => undefined, superuser: async () => undefined };
    const router = new ApiRouter(pass);
    const route = (path: string) => () =>
      router.add({ method: 'get', path, summary: 'probe', tags: ['test'], access: 'public', responses: { 200: { description: 'probe' } }, handler: () => {} });
    expect(route('/api/{version}/things')).to.throw(/first 3 segments/);
    expect(route('/api/v1/{thing}')).to.throw(/first 3 segments/);
    expect(route('/api/v1/things/{thing}')).not.to.throw();
    expect(route('/ping')).not.to.throw();
  });

  it('a route keys may call declares the scope a key needs: without one it does not compile, nor is it added', () => {
    const pass: Guards = { caller: async () => undefined, sessionCaller: async () => undefined, superuser: async () => undefined };
    const router = new ApiRouter(pass);
    const probe = { method: 'get' as const, path: '/api/v1/probes', summary: 'probe', tags: ['test'], responses: { 200: { description: 'probe' } }, handler: () => {} };
    // @ts-expect-error a 'session' route without its scope
    expect(() => router.add({ ...probe, access: 'session' })).to.throw(/scope/);
    // @ts-expect-error a 'superuser' route without its scope
    expect(() => router.add({ ...probe, access: 'superuser' })).to.throw(/scope/);
    // @ts-expect-error a scope on a route no key may call
    router.add({ ...probe, path: '/api/v1/probes/mine', access: 'session-only', scope: 'read' });
    expect(() => router.add({ ...probe, path: '/api/v1/probes/read', access: 'session', scope: 'read' })).not.to.throw();
  });
});
