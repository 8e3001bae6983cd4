import type { EntityManager } from '@mikro-orm/postgresql';
import { AnalysisPreset, PreviewPreset, type AnalysisPresetRow, type PreviewPresetRow } from './entities.ts';
import { registerPresetRoutes } from './routes.ts';
import {
  AnalysisPresetCreate,
  AnalysisPresetPatch,
  AnalysisPresetRead,
  analysisPresetRead,
  analysisProperties,
  PreviewPresetCreate,
  PreviewPresetPatch,
  PreviewPresetRead,
  previewPresetRead,
  previewProperties,
} from './schemas.ts';
import { UserPresets } from './service.ts';
import type { AppRouter } from '../accounts/guards.ts';

/** The spec's Limits row "Analysis presets: 5 per user". */
const MAX_ANALYSIS_PRESETS = 5;

const analysisPresets = new UserPresets<AnalysisPresetRow>({ entity: AnalysisPreset, lockName: 'analysis_presets', limit: MAX_ANALYSIS_PRESETS, hasDefault: true });
const previewPresets = new UserPresets<PreviewPresetRow>({ entity: PreviewPreset, lockName: 'preview_presets', hasDefault: false });

/** Analysis presets at /users/me/presets, preview presets at /users/me/preview-presets. */
export function registerPresets(router: AppRouter): void {
  registerPresetRoutes(router, {
    path: '/api/v1/users/me/presets',
    noun: 'analysis preset',
    presets: analysisPresets,
    read: AnalysisPresetRead,
    create: AnalysisPresetCreate,
    patch: AnalysisPresetPatch,
    properties: analysisProperties,
    view: analysisPresetRead,
    createResponses: { 403: { description: `The caller already has ${MAX_ANALYSIS_PRESETS} analysis presets (code PresetLimitReached)` } },
  });
  registerPresetRoutes(router, {
    path: '/api/v1/users/me/preview-presets',
    noun: 'preview preset',
    presets: previewPresets,
    read: PreviewPresetRead,
    create: PreviewPresetCreate,
    patch: PreviewPresetPatch,
    properties: previewProperties,
    view: previewPresetRead,
  });
}

/** Account deletion: the user's presets of both kinds. */
export async function deletePresetsOf(em: EntityManager, userId: string): Promise<void> {
  await analysisPresets.deleteAllOf(em, userId);
  await previewPresets.deleteAllOf(em, userId);
}
