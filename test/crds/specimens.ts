// Specs and statuses that the zod schemas of crds/contract/resources.ts and the CRDs made from
// them must judge alike: test/crds (the generator) and test/kubernetes (the real API server).
export const validSpecs: [string, unknown][] = [
  ['all fields', { jobId: '0f6b5a52-93a4-4d7e-8f6c-2a1d3c4b5e6f', program: 'media-edit', userId: '5d1c2b3a-4e5f-4a6b-9c8d-7e6f5a4b3c2d', projectId: 'a1b2c3d4-e5f6-4a1b-8c2d-3e4f5a6b7c8d', mediaFileId: 'b1b2c3d4-e5f6-4a1b-8c2d-3e4f5a6b7c8d', input: { cuts: [[0, 1.2]], nested: { x: null } }, outputPrefix: 'exports/1/', timeoutSeconds: 3600 }],
  ['only the required fields', { jobId: '0f6b5a52-93a4-4d7e-8f6c-2a1d3c4b5e6f', program: 'artifact', userId: '5d1c2b3a-4e5f-4a6b-9c8d-7e6f5a4b3c2d', input: {}, outputPrefix: 'a' }],
  ['an unknown field (pruned by the server, stripped by zod)', { jobId: '0f6b5a52-93a4-4d7e-8f6c-2a1d3c4b5e6f', program: 'render', userId: '5d1c2b3a-4e5f-4a6b-9c8d-7e6f5a4b3c2d', input: {}, outputPrefix: 'a', extra: 1 }],
];

const base = validSpecs[1]![1] as Record<string, unknown>;
export const invalidSpecs: [string, unknown][] = [
  ['jobId not a uuid', { ...base, jobId: 'job-1' }],
  ['userId missing', { ...base, userId: undefined }],
  ['program empty', { ...base, program: '' }],
  ['program with capitals', { ...base, program: 'Render' }],
  ['input not an object', { ...base, input: 'x' }],
  ['input missing', { ...base, input: undefined }],
  ['outputPrefix missing', { ...base, outputPrefix: undefined }],
  ['outputPrefix empty', { ...base, outputPrefix: '' }],
  ['timeoutSeconds fractional', { ...base, timeoutSeconds: 1.5 }],
  ['timeoutSeconds zero', { ...base, timeoutSeconds: 0 }],
  ['timeoutSeconds a string', { ...base, timeoutSeconds: '60' }],
  ['projectId not a uuid', { ...base, projectId: 'p' }],
  ['not an object', 'spec'],
];

const condition = { type: 'Ready', status: 'True', reason: 'JobRunning', message: '', lastTransitionTime: '2025-03-01T10:00:00Z' };
export const statuses: [string, unknown][] = [
  ['empty', {}],
  ['running', { phase: 'Running', progress: 12.5, step: 'transcribing', jobName: 'rj-1', startedAt: '2025-03-01T10:00:00.123Z', observedGeneration: 1, conditions: [condition] }],
  ['failed', { phase: 'Failed', error: 'ffmpeg exited 1', finishedAt: '2025-03-01T10:00:00Z' }],
  ['unknown phase', { phase: 'Done' }],
  ['progress above 100', { progress: 101 }],
  ['negative progress', { progress: -1 }],
  ['condition without reason', { conditions: [{ ...condition, reason: undefined }] }],
  ['condition status not True/False/Unknown', { conditions: [{ ...condition, status: 'yes' }] }],
  ['startedAt not a timestamp', { startedAt: 'yesterday' }],
];
