import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { z } from 'zod';
import { eventCatalog, webhookOf, WEBHOOK_TEXT_MAX, type EventDeclaration, type ProjectEvent, type StreamEvent, type StreamEventType } from '../../api/src/events/catalog.ts';
import { webhookEventTypes } from '../../api/src/webhooks/payloads.ts';
import { checkWebhookPayload } from '../support/contract.ts';
import { json, startTestApp, type TestApp } from '../support/harness.ts';

const project = randomUUID();
const run = randomUUID();
const exported = randomUUID();
const media = { media_file_uuid: randomUUID(), media_item_uuid: randomUUID(), display_name: 'Keynote' };
const longError = 'x'.repeat(WEBHOOK_TEXT_MAX + 500);

/** One event of every type, as a feature sends it: typed by the catalog, so a new event does not compile until it has one here. */
const samples: { [T in StreamEventType]: StreamEvent<T>['data'] } = {
  media_ready: { ...media, proxy_status: 'ready' },
  media_failed: { ...media, error: longError },
  analysis_started: { project_uuid: project, analysis_run_id: run },
  analysis_progress: { project_uuid: project, analysis_run_id: run, step: 'transcribe', progress: 40 },
  analysis_complete: { project_uuid: project, analysis_run_id: run, edit_count: 3 },
  analysis_failed: { project_uuid: project, analysis_run_id: run, error: longError },
  export_started: { export_uuid: exported },
  export_progress: { export_uuid: exported, progress: 30, message: 'Rendering' },
  export_complete: { export_uuid: exported, storage_key: 'exports/secret-key.mp4' },
  export_failed: { export_uuid: exported, error: longError },
};

const types = Object.keys(eventCatalog) as StreamEventType[];
const pathOf = { user: '/api/v1/user-stream', project: '/api/v1/projects/{project_uuid}/events' } as const;

// What the compiler refuses (tsc --noEmit reads these lines; an error that stops happening fails the typecheck):
// @ts-expect-error a declaration that decides nothing about webhooks is not an event of the catalog
export const undecided: EventDeclaration = { stream: 'project', data: z.object({ export_uuid: z.uuid() }), about: 'a new event' };
// @ts-expect-error an event's data is its catalog entry's: analysis_complete names its run
export const unnamedRun: ProjectEvent = { type: 'analysis_complete', data: { project_uuid: project, edit_count: 1 } };
// @ts-expect-error no event of the project stream is called analysis_done
export const unknownType: ProjectEvent = { type: 'analysis_done', data: { project_uuid: project, analysis_run_id: run } };

describe('one event catalog: every stream event declared once, with its webhook decided and the document derived from it', function () {
  this.timeout(60_000);
  let app: TestApp;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the served document, read as JSON
  let document: any;

  before(async () => {
    app = await startTestApp();
    document = await json(await app.fetch('/api/v1/openapi.json'));
  });
  after(() => app.close());

  it('every event has a webhook or a stated reason for none', () => {
    for (const type of types) {
      const declared: EventDeclaration = eventCatalog[type];
      if (declared.webhook) expect(declared.webhook.name, type).to.match(/^[a-z]+\.[a-z]+$/);
      else expect(declared.noWebhook, `${type} says why it has no webhook`).to.be.a('string').and.not.equal('');
    }
  });

  it("every event is described by its stream's 200 in the document, with its data's fields, and by no other stream", () => {
    for (const type of types) {
      const { stream, data } = eventCatalog[type];
      const own = document.paths[pathOf[stream]].get;
      const other = document.paths[pathOf[stream === 'user' ? 'project' : 'user']].get;
      expect(own.summary, `${type} in its stream's summary`).to.include(type);
      expect(own.responses['200'].description, `${type} and its fields in its stream's 200`).to.include(`\`${type}\` { ${Object.keys(data.shape).join(', ')} }`);
      expect(other.summary, `${type} not in the other stream`).not.to.include(type);
      expect(other.responses['200'].description).not.to.include(`\`${type}\``);
    }
  });

  it("every webhook the catalog derives is under the document's webhooks, and the payload derived from a sample event validates against it", () => {
    const derived = types.flatMap((type) => {
      const webhook = webhookOf({ type, data: samples[type] } as StreamEvent, { projectId: project });
      return webhook ? [{ type, webhook }] : [];
    });
    expect(derived.map(({ webhook }) => webhook.type)).to.have.members(webhookEventTypes.filter((name) => !/^(subscription|credits)\./.test(name)));
    for (const { type, webhook } of derived) {
      const payload = { type: webhook.type, timestamp: new Date().toISOString(), data: webhook.data };
      expect(checkWebhookPayload(document, webhook.type, payload), `${type} → ${webhook.type}`).to.equal(null);
    }
  });

  it('a webhook carries the project and ids a client needs, never a storage key, and texts cut to the payload limit', () => {
    const completed = webhookOf({ type: 'export_complete', data: samples.export_complete }, { projectId: project });
    expect(completed).to.deep.equal({ type: 'export.completed', data: { project_uuid: project, export_uuid: exported } });
    const failed = webhookOf({ type: 'media_failed', data: samples.media_failed }, { projectId: null });
    expect(failed?.data).to.deep.include({ project_uuid: null, media_item_uuid: media.media_item_uuid });
    expect((failed?.data as { error: string }).error).to.have.length(WEBHOOK_TEXT_MAX);
    expect(webhookOf({ type: 'analysis_progress', data: samples.analysis_progress }, { projectId: project })).to.equal(null);
  });
});
