import { z } from 'zod';
import type { MikroORM } from '@mikro-orm/postgresql';
import { requireAuth, type AppRouter } from '../accounts/guards.ts';
import { pageOf, pageQuery } from '../http/pagination.ts';
import { ProjectCreate, ProjectPage, ProjectRead, projectRead, projectSummary, ProjectUuidParams } from './schemas.ts';
import type { ProjectService } from './service.ts';

/** POST/GET projects and the full read of one; the list reads through prepared statements on the ORM's pool, with no request EntityManager. */
export function registerProjectRoutes(router: AppRouter, projects: ProjectService, orm: MikroORM): void {
  router.add({
    method: 'post',
    path: '/api/v1/projects/',
    summary: "Creates a project (status created), within the tier's max_projects.",
    tags: ['projects'],
    access: 'session',
    scope: 'write',
    body: ProjectCreate,
    responses: {
      201: { description: 'The project', schema: ProjectRead },
      403: { description: "The tier's max_projects is reached (code ProjectLimitReached)" },
    },
    handler: async (ctx, { body, caller, em }) => {
      const project = await projects.create(em, caller.user.id, body.name);
      ctx.status = 201;
      ctx.body = projectRead(project);
    },
  });

  router.add({
    method: 'get',
    path: '/api/v1/projects/',
    summary: "The caller's projects, newest first.",
    tags: ['projects'],
    access: 'session',
    scope: 'read',
    query: z.object(pageQuery),
    responses: { 200: { description: 'A page of projects', schema: ProjectPage } },
    handler: async (ctx, { query, caller }) => {
      const { rows, total } = await projects.list(orm, caller.user.id, query);
      ctx.body = pageOf(rows.map(projectSummary), total, query);
    },
  });

  router.add({
    method: 'get',
    path: '/api/v1/projects/{project_uuid}',
    summary: 'One project of the caller with its settings, transcript and active run.',
    tags: ['projects'],
    access: 'session',
    scope: 'read',
    params: ProjectUuidParams,
    responses: { 200: { description: 'The project', schema: ProjectRead }, 404: { description: 'No such project of the caller' } },
    handler: async (ctx, { params, caller, em }) => {
      ctx.body = projectRead(await projects.owned(em, caller.user.id, params.project_uuid));
    },
  });
}
