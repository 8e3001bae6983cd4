import { expect } from 'chai';
import { json, startTestApp, type TestApp } from '../support/harness.ts';
import { operationIdOf } from '../../api/src/http/router.ts';

/* eslint-disable @typescript-eslint/no-explicit-any -- the document is JSON as served */

const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;

/**
 * The document's promises, over every operation it holds (so over every route a merge
 * adds): operationIds, the shared Error schema, the security requirements, the media
 * type of event streams.
 */
describe('the API document describes every operation the same way', () => {
  let app: TestApp;
  let document: any;
  let operations: { method: string; path: string; operation: any }[];
  before(async () => {
    app = await startTestApp();
    document = await json(await app.fetch('/api/v1/openapi.json'));
    operations = Object.entries(document.paths as Record<string, any>).flatMap(([path, item]) =>
      METHODS.filter((method) => item[method]).map((method) => ({ method, path, operation: item[method] })),
    );
  });
  after(() => app.close());

  it('each operation has a unique operationId, derived from its method and path: get /api/v1/projects/{project_uuid}/edits/ is getProjectsByProjectUuidEdits', () => {
    const ids = operations.map(({ operation }) => operation.operationId as string);
    expect(ids.filter((id) => typeof id !== 'string')).to.deep.equal([]);
    expect(new Set(ids).size).to.equal(ids.length);
    expect(document.paths['/api/v1/projects/{project_uuid}/edits/'].get.operationId).to.equal('getProjectsByProjectUuidEdits');
    expect(document.paths['/api/v1/users/me'].delete.operationId).to.equal('deleteUsersMe');
    expect(operationIdOf('post', '/api/v1/media/{media_file_id}/confirm')).to.equal('postMediaByMediaFileIdConfirm');
    expect(operationIdOf('get', '/healthz')).to.equal('getHealthz');
  });

  it('every error answer (4xx and default) is the Error schema {detail, code?, errors?, support_id?} unless the route names its own', () => {
    expect(document.components.schemas.Error.required).to.deep.equal(['detail']);
    expect(Object.keys(document.components.schemas.Error.properties)).to.have.members(['detail', 'code', 'errors', 'support_id']);
    const own = new Set(['GET /readyz 503']);
    for (const { method, path, operation } of operations) {
      for (const [status, response] of Object.entries(operation.responses as Record<string, any>)) {
        if (!(status === 'default' || Number(status) >= 400) || own.has(`${method.toUpperCase()} ${path} ${status}`)) continue;
        expect(response.content?.['application/json']?.schema, `${method} ${path} ${status}`).to.deep.equal({ $ref: '#/components/schemas/Error' });
      }
    }
  });

  it('security: public routes need nothing, reads the session cookie or a Bearer key, mutations the session cookie and the X-CSRF-Token header or a Bearer key, the key with the scope the route declares; session-only routes no key; the three schemes are defined', () => {
    expect(document.components.securitySchemes.session).to.include({ type: 'apiKey', in: 'cookie', name: 'session' });
    expect(document.components.securitySchemes.csrf).to.include({ type: 'apiKey', in: 'header', name: 'X-CSRF-Token' });
    expect(document.components.securitySchemes.apiKey).to.include({ type: 'http', scheme: 'bearer' });
    const securityOf = (method: string, path: string) => document.paths[path][method].security;
    expect(securityOf('get', '/healthz')).to.deep.equal([]);
    expect(securityOf('post', '/api/v1/auth/login')).to.deep.equal([]);
    expect(securityOf('get', '/api/v1/projects/')).to.deep.equal([{ session: [] }, { apiKey: ['read'] }]);
    expect(securityOf('post', '/api/v1/projects/')).to.deep.equal([{ session: [], csrf: [] }, { apiKey: ['write'] }]);
    expect(securityOf('delete', '/api/v1/edits/{edit_uuid}')).to.deep.equal([{ session: [], csrf: [] }, { apiKey: ['write'] }]);
    expect(securityOf('get', '/api/v1/users/me/billing')).to.deep.equal([{ session: [] }, { apiKey: ['billing'] }]);
    expect(securityOf('post', '/api/v1/users/me/api-keys')).to.deep.equal([{ session: [], csrf: [] }]);
    expect(securityOf('delete', '/api/v1/users/me')).to.deep.equal([{ session: [], csrf: [] }]);
    for (const { method, path, operation } of operations) {
      // Every requirement names only defined schemes, and every session mutation asks for the CSRF header with the cookie.
      for (const requirement of operation.security ?? document.security) {
        for (const scheme of Object.keys(requirement)) expect(document.components.securitySchemes, `${method} ${path}`).to.have.property(scheme);
        if ('session' in requirement && method !== 'get') expect(requirement, `${method} ${path}`).to.have.property('csrf');
      }
    }
  });

  it('routes behind a session list 401, mutations behind one 403, routes with path parameters 404, every route 422', () => {
    for (const { method, path, operation } of operations) {
      const statuses = Object.keys(operation.responses);
      const requirements: object[] = operation.security ?? document.security;
      if (requirements.length) expect(statuses, `${method} ${path}`).to.include('401');
      if (requirements.some((requirement) => 'csrf' in requirement)) expect(statuses, `${method} ${path}`).to.include('403');
      if (path.includes('{')) expect(statuses, `${method} ${path}`).to.include('404');
      expect(statuses, `${method} ${path}`).to.include('422');
    }
  });

  it('the event streams declare text/event-stream', () => {
    for (const path of ['/api/v1/user-stream', '/api/v1/projects/{project_uuid}/events']) {
      expect(Object.keys(document.paths[path].get.responses['200'].content), path).to.deep.equal(['text/event-stream']);
    }
  });
});
