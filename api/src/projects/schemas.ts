import { z } from 'zod';
import { pageSchema } from '../http/pagination.ts';
import { projectStatuses, type ProjectRow } from './entities.ts';

export const ProjectCreate = z.strictObject({ name: z.string().trim().min(1).max(200) });

export const ProjectUuidParams = z.object({ project_uuid: z.uuid() });

export const ProjectSummary = z
  .object({
    uuid: z.uuid(),
    name: z.string(),
    status: z.enum(projectStatuses),
    active_run_id: z.uuid().nullable(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'ProjectSummary' });

export const ProjectRead = ProjectSummary.extend({
  settings: z.record(z.string(), z.unknown()),
  transcript: z.record(z.string(), z.unknown()).nullable(),
}).meta({ id: 'ProjectRead' });

export const ProjectPage = pageSchema(ProjectSummary, 'ProjectPage');

export function projectSummary(project: ProjectRow): z.infer<typeof ProjectSummary> {
  return {
    uuid: project.id,
    name: project.name,
    status: project.status,
    active_run_id: project.activeRunId ?? null,
    created_at: project.createdAt.toISOString(),
    updated_at: project.updatedAt.toISOString(),
  };
}

export function projectRead(project: ProjectRow): z.infer<typeof ProjectRead> {
  return { ...projectSummary(project), settings: project.settings, transcript: project.transcript ?? null };
}
