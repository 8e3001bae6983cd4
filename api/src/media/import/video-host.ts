import type Mux from '@mux/mux-node';

/** What an import needs to know about an external video, fetched before anything is stored. */
export interface ExternalVideo {
  /** The host's stable id (the asset id for Mux): files are deduplicated by it. */
  externalId: string;
  durationSeconds: number;
  /** An MP4 the import job streams into the bucket. */
  downloadUrl: string;
  /** As the host has it: untrusted (the service cleans it before storing it). */
  title: string | null;
}

/** A video host the importer understands. */
export interface VideoHost {
  readonly name: string;
  /** Null when the URL is not one of this host's video addresses. */
  parse(url: string): { id: string } | null;
  /** Throws VideoHostUnavailable when the host cannot tell. */
  metadata(id: string): Promise<ExternalVideo>;
}

export class VideoHostUnavailable extends Error {
  constructor(host: string, options?: ErrorOptions) {
    super(`metadata of ${host} unavailable`, options);
    this.name = 'VideoHostUnavailable';
  }
}

const PLAYBACK_ID = /^[A-Za-z0-9]{10,64}$/;

/**
 * Mux: `https://stream.mux.com/{playback_id}.m3u8` (also `/{playback_id}/…` renditions
 * and `https://player.mux.com/{playback_id}`). The playback id names the asset; the
 * download is the asset's highest MP4 static rendition on the stream host. With
 * MUX_API_BASE set (tests' local double) that origin serves API, stream and download.
 */
export class MuxVideoHost implements VideoHost {
  readonly name = 'Mux';
  /** The SDK (about 85 modules) is loaded by the first import that asks Mux, not at start-up: imports are for superusers only. */
  #client: Promise<Mux> | undefined;
  readonly #options: { tokenId: string | undefined; tokenSecret: string | undefined; apiBase: string | undefined };
  readonly #streamOrigins: string[];
  readonly #downloadOrigin: string;

  constructor(options: { tokenId: string | undefined; tokenSecret: string | undefined; apiBase: string | undefined }) {
    this.#options = options;
    const local = options.apiBase ? new URL(options.apiBase).origin : null;
    this.#streamOrigins = ['https://stream.mux.com', 'https://player.mux.com', ...(local ? [local] : [])];
    this.#downloadOrigin = local ?? 'https://stream.mux.com';
  }

  parse(raw: string): { id: string } | null {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return null;
    }
    if (!this.#streamOrigins.includes(url.origin)) return null;
    const id = /^\/([^/.]+)(?:\.m3u8|\/.*)?$/.exec(url.pathname)?.[1];
    return id && PLAYBACK_ID.test(id) ? { id } : null;
  }

  #mux(): Promise<Mux> {
    const options = this.#options;
    this.#client ??= import('@mux/mux-node').then(
      ({ default: Sdk }) =>
        new Sdk({
          tokenId: options.tokenId ?? null,
          tokenSecret: options.tokenSecret ?? null,
          ...(options.apiBase ? { baseURL: options.apiBase } : {}),
          maxRetries: 0,
          timeout: 10_000,
        }),
    );
    return this.#client;
  }

  async metadata(playbackId: string): Promise<ExternalVideo> {
    try {
      const client = await this.#mux();
      const playback = await client.video.playbackIds.retrieve(playbackId);
      if (playback.object?.type !== 'asset' || !playback.object.id) throw new Error('the playback id does not name an asset');
      const asset = await client.video.assets.retrieve(playback.object.id);
      if (typeof asset.duration !== 'number') throw new Error('the asset has no duration yet');
      return {
        externalId: `mux:${asset.id}`,
        durationSeconds: asset.duration,
        downloadUrl: `${this.#downloadOrigin}/${playbackId}/highest.mp4`,
        title: asset.meta?.title ?? null,
      };
    } catch (error) {
      throw new VideoHostUnavailable(this.name, { cause: error });
    }
  }
}
