/**
 * The tier table: what each plan allows. Other features read it through these
 * accessors rather than hard-coding numbers. Sizes are binary (1 MB = 2^20 bytes),
 * matching STORAGE_MAX_UPLOAD_SIZE_MB, where 2048 MB is 2 GB.
 */
export const tierNames = ['Free', 'Hobby', 'Creator', 'Viral'] as const;
export type TierName = (typeof tierNames)[number];

export interface TierLimits {
  /** Projects a user may own; Infinity for no limit (sent as -1 in billing status). */
  maxProjects: number;
  exportRetentionDays: number;
  monthlyAiMinutes: number;
  storageQuotaBytes: number;
  canWatermarkFree: boolean;
  canUseAiDirector: boolean;
}

const MB = 1024 * 1024;
const GB = 1024 * MB;

export const TIERS: Readonly<Record<TierName, Readonly<TierLimits>>> = {
  Free: { maxProjects: 3, exportRetentionDays: 3, monthlyAiMinutes: 10, storageQuotaBytes: 500 * MB, canWatermarkFree: false, canUseAiDirector: false },
  Hobby: { maxProjects: 20, exportRetentionDays: 14, monthlyAiMinutes: 120, storageQuotaBytes: 2 * GB, canWatermarkFree: true, canUseAiDirector: false },
  Creator: { maxProjects: 100, exportRetentionDays: 30, monthlyAiMinutes: 600, storageQuotaBytes: 25 * GB, canWatermarkFree: true, canUseAiDirector: true },
  Viral: { maxProjects: Infinity, exportRetentionDays: 90, monthlyAiMinutes: 2400, storageQuotaBytes: 100 * GB, canWatermarkFree: true, canUseAiDirector: true },
};

export function tierLimits(tier: TierName): Readonly<TierLimits> {
  return TIERS[tier];
}

export function storageQuotaBytes(tier: TierName): number {
  return TIERS[tier].storageQuotaBytes;
}

export function maxProjects(tier: TierName): number {
  return TIERS[tier].maxProjects;
}

/** Whether one more project fits the tier. */
export function canCreateProject(tier: TierName, projectCount: number): boolean {
  return projectCount < TIERS[tier].maxProjects;
}

/** Exports made on this tier are watermarked unless the tier may export without one. */
export function watermarkRequired(tier: TierName): boolean {
  return !TIERS[tier].canWatermarkFree;
}

/** The trial: 7 days at Creator with 30 AI minutes. */
export const TRIAL = { tier: 'Creator' as TierName, days: 7, aiMinutes: 30 } as const;

/** Credits are AI minutes rounded up to a tenth of a minute. */
export function roundMinutes(minutes: number): number {
  return Math.ceil(Math.round(minutes * 1000) / 100) / 10;
}
