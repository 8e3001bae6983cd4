import { expect } from 'chai';
import { appendSingleCanvas } from '../../api/src/canvases/spine.ts';
import { createItem } from '../media/library-fixtures.ts';
import { json, type TestApp } from './harness.ts';
import type { SignedIn } from './users.ts';

/** A new project of the owner, through the api. */
export async function newProject(owner: SignedIn, name = 'Talk'): Promise<string> {
  const response = await owner.client.post('/api/v1/projects/', { name });
  expect(response.status).to.equal(201);
  return (await json(response)).uuid;
}

/** A project whose spine plays sources of these durations (null: still unknown), made as rows. */
export async function projectWithSources(app: TestApp, owner: SignedIn, durations: readonly (number | null)[]): Promise<string> {
  const projectId = await newProject(owner);
  for (const durationMs of durations) {
    const { item } = await createItem(app, owner.user.id, { scope: 'project', scopeProjectId: projectId, file: { durationMs, hasAudio: true } });
    await app.services.orm.em.fork().transactional((tx) => appendSingleCanvas(tx, projectId, item.id));
  }
  return projectId;
}
