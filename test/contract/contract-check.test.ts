import { expect } from 'chai';
import type { TestApp } from '../support/harness.ts';
import { checkResponsesAgainstDocument, checkWebhookPayload } from '../support/contract.ts';

/** A document of one operation, GET /things/{id}: 200 with `{ id: uuid, count: integer }`, 404 with the Error schema. */
const DOCUMENT = {
  openapi: '3.1.0',
  info: { title: 't', version: '1' },
  paths: {
    '/things/{id}': {
      get: {
        responses: {
          200: { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } } },
          404: { description: 'none', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
          429: {
            description: 'slow down',
            headers: { 'Retry-After': { required: true, schema: { type: 'integer' } } },
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
          },
          default: { description: 'failure', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
        },
      },
    },
  },
  components: {
    schemas: {
      Thing: { type: 'object', properties: { id: { type: 'string', format: 'uuid' }, count: { type: 'integer' } }, required: ['id', 'count'] },
      Error: { type: 'object', properties: { detail: { type: 'string' } }, required: ['detail'] },
    },
  },
};

/** An app stand-in whose answers the test chooses, so the checker's verdicts can be seen to fail. */
function fakeApp(answer: () => Response): TestApp {
  return {
    url: 'http://127.0.0.1:9',
    fetch: (path: string) => Promise.resolve(path === '/api/v1/openapi.json' ? Response.json(DOCUMENT) : answer()),
  } as unknown as TestApp;
}

describe('the contract check of real answers (test/support/contract.ts) can fail', () => {
  const cases: [string, () => Response, RegExp | null][] = [
    ['a body of the schema passes', () => Response.json({ id: '8d0e2f7c-0000-4000-8000-000000000000', count: 2 }), null],
    ['a body missing a required field', () => Response.json({ id: '8d0e2f7c-0000-4000-8000-000000000000' }), /does not match its schema/],
    ['a field of the wrong format', () => Response.json({ id: 'nope', count: 1 }), /must match format "uuid"/],
    ['a status the operation does not list', () => Response.json({ detail: 'x' }, { status: 409 }), /409: status not listed/],
    ['an error body without detail', () => Response.json({ message: 'x' }, { status: 404 }), /does not match its schema/],
    ['a media type not declared', () => new Response('hello', { headers: { 'Content-Type': 'text/plain' } }), /Content-Type text\/plain is not declared/],
    ['a 5xx falls to default', () => Response.json({ detail: 'down' }, { status: 503 }), null],
    ['a required header missing', () => Response.json({ detail: 'slow' }, { status: 429 }), /required header Retry-After is missing/],
    ['a required header present', () => Response.json({ detail: 'slow' }, { status: 429, headers: { 'Retry-After': '3' } }), null],
  ];
  for (const [situation, answer, expected] of cases) {
    it(situation, async () => {
      const app = fakeApp(answer);
      const check = await checkResponsesAgainstDocument(app);
      await app.fetch('/things/8d0e2f7c-0000-4000-8000-000000000000');
      expect(check.exchanges).to.have.length(1);
      if (expected) expect(check.violations.join('\n')).to.match(expected);
      else expect(check.violations).to.deep.equal([]);
    });
  }
});

describe('the contract check of webhook payloads (test/support/contract.ts) can fail', () => {
  const document = {
    ...DOCUMENT,
    webhooks: {
      export_complete: {
        post: {
          requestBody: { content: { 'application/json': { schema: { type: 'object', properties: { export_uuid: { type: 'string', format: 'uuid' } }, required: ['export_uuid'] } } } },
          responses: { 200: { description: 'received' } },
        },
      },
    },
  };

  it('a payload of the declared schema passes; one without a required id, or of an undeclared event, does not', () => {
    expect(checkWebhookPayload(document, 'export_complete', { export_uuid: '8d0e2f7c-0000-4000-8000-000000000000' })).to.equal(null);
    expect(checkWebhookPayload(document, 'export_complete', {})).to.match(/must have required property 'export_uuid'/);
    expect(checkWebhookPayload(document, 'media_ready', {})).to.match(/no webhook media_ready/);
  });
});
