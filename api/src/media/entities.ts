import { defineEntity, p } from '@mikro-orm/core';

export const mediaFileStatuses = ['PENDING', 'MULTIPART_INITIATED', 'PROCESSING', 'UPLOADED', 'FAILED'] as const;
export type MediaFileStatus = (typeof mediaFileStatuses)[number];
export const proxyStatuses = ['not_applicable', 'pending', 'ready', 'unknown'] as const;
export const mediaScopes = ['library', 'project'] as const;
export type MediaScope = (typeof mediaScopes)[number];

/** A stored file, content-addressed by sha256 once the artifact job has read it. */
export const MediaFile = defineEntity({
  name: 'MediaFile',
  tableName: 'media_files',
  properties: {
    id: p.uuid().primary(),
    uploaderId: p.uuid().index(),
    status: p.enum([...mediaFileStatuses]).default('PENDING'),
    /** The object the service serves, written only by the service's jobs (never through a client URL). */
    storageKey: p.string().length(1024),
    /**
     * Where the uploader's presigned URLs write (`uploads/<id>/<random>`), single PUT and multipart
     * alike; the artifact job hashes it while copying it to `storageKey`, then it is deleted and this cleared.
     */
    uploadKey: p.string().length(1024).nullable().index(),
    contentType: p.string().length(255),
    originalFilename: p.string().length(255),
    declaredSizeBytes: p.bigint('number'),
    /** The stored object's real size, authoritative for quota (set at confirm or complete). */
    sizeBytes: p.bigint('number').nullable(),
    sha256Hash: p.string().length(64).nullable().index().fieldName('sha256_hash'),
    externalVideoId: p.string().length(255).nullable().index(),
    kind: p.string().length(16).nullable(),
    durationMs: p.integer().nullable(),
    hasAudio: p.boolean().default(false),
    width: p.integer().nullable(),
    height: p.integer().nullable(),
    videoCodec: p.string().length(64).nullable(),
    audioCodec: p.string().length(64).nullable(),
    container: p.string().length(128).nullable(),
    /** The picture's base frame rate, num/den as probed (timeline exports keep it rational); null for audio, images and files probed before it was recorded. */
    frameRateNum: p.integer().nullable(),
    frameRateDen: p.integer().nullable(),
    waveformJson: p.json<number[]>().nullable(),
    /**
     * The picture's keyframes, ms from the container's start, ascending (the artifact result's
     * keyframes_ms): the editing core slides shortened pauses' cuts onto them. Null for audio,
     * images, intra-only pictures and files probed before it was recorded (their cuts never
     * slide). Lazy: only the edit's resolution reads it, not every read of a file.
     */
    keyframesMs: p.json<number[]>().nullable().lazy(),
    thumbnailKey: p.string().length(1024).nullable(),
    audioKey: p.string().length(1024).nullable(),
    proxyKey: p.string().length(1024).nullable(),
    spriteKey: p.string().length(1024).nullable(),
    sprite: p.json<Record<string, number>>().nullable(),
    proxyStatus: p.enum([...proxyStatuses]).default('unknown'),
    uploadId: p.string().length(1024).nullable(),
    partsCount: p.integer().nullable(),
    partSizeBytes: p.integer().nullable(),
    /** English text of why the file FAILED: logs and the fallback of `errorCode`. */
    error: p.text().nullable(),
    /** Stable code of the failure (`failure.<code>` in i18n/messages/job-texts.ts), translated when shown. */
    errorCode: p.string().length(64).nullable(),
    errorParams: p.json<Record<string, string | number>>().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
  indexes: [
    // the stale multipart sweep looks uploads up by state and age
    { properties: ['status', 'createdAt'] },
    // concurrent imports of one external video cannot both create a file; a FAILED one may be retried
    { name: 'media_files_external_video_id_live_unique', expression: `create unique index "media_files_external_video_id_live_unique" on "media_files" ("external_video_id") where "status" <> 'FAILED'` },
    // identical content is stored once: a backstop for the artifact completion's per-hash lock
    { name: 'media_files_sha256_hash_uploaded_unique', expression: `create unique index "media_files_sha256_hash_uploaded_unique" on "media_files" ("sha256_hash") where "status" = 'UPLOADED'` },
  ],
});

export type MediaFileRow = InstanceType<typeof MediaFile.class>;

/** A user's reference to a stored file, in their library or in one of their projects. */
export const MediaItem = defineEntity({
  name: 'MediaItem',
  tableName: 'media_items',
  properties: {
    id: p.uuid().primary(),
    userId: p.uuid().index(),
    file: () => p.manyToOne(MediaFile).fieldName('media_file_id').index(),
    scope: p.enum([...mediaScopes]),
    scopeProjectId: p.uuid().nullable().index(),
    displayName: p.string().length(255).nullable(),
    tags: p.array().default([]),
    behaviorDefaults: p.json<Record<string, unknown>>().onCreate(() => ({})),
    /** Bytes charged to this item's owner for it (the file's real size at confirm or complete); refunded when it is deleted. */
    chargedBytes: p.bigint('number').default(0),
    /** The file a `replace` media edit made for this item, while its job runs: the item reads `pending` until it ends. */
    pendingFileId: p.uuid().nullable(),
    /**
     * When this item's upload folded onto identical content stored before (content addressing):
     * the file id its client was given and the name it uploaded, which read models keep showing,
     * so nobody learns from them that someone else had stored the same bytes. Null otherwise.
     */
    uploadedFileId: p.uuid().nullable().index(),
    uploadedFilename: p.string().length(255).nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export type MediaItemRow = InstanceType<typeof MediaItem.class>;
