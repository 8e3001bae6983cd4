/**
 * The few Mux endpoints an import uses, on loopback (MUX_API_BASE), so the api and the
 * media-import program, both other processes, reach it: playback id → asset, asset →
 * duration and title, and the MP4 rendition. Each playback id serves bytes of its own,
 * registered before the import is asked for.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface MuxDouble {
  origin: string;
  /** Serves `bytes` as the rendition of a new playback id (assets are named after it). */
  add(playbackId: string, bytes: Buffer, durationSeconds: number): void;
  close(): Promise<void>;
}

export async function startMuxDouble(): Promise<MuxDouble> {
  const assets = new Map<string, { bytes: Buffer; duration: number }>();
  const server: Server = createServer((request, response) => {
    const path = request.url ?? '';
    const reply = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    let match = /^\/video\/v1\/playback-ids\/(\w+)$/.exec(path);
    if (match && assets.has(match[1]!)) return reply(200, { data: { id: match[1], policy: 'public', object: { type: 'asset', id: `asset${match[1]}` } } });
    match = /^\/video\/v1\/assets\/asset(\w+)$/.exec(path);
    const asset = match ? assets.get(match[1]!) : undefined;
    if (asset) return reply(200, { data: { id: `asset${match![1]}`, status: 'ready', duration: asset.duration, meta: { title: `Chaos ${match![1]}` } } });
    match = /^\/(\w+)\/highest\.mp4$/.exec(path);
    const rendition = match ? assets.get(match[1]!) : undefined;
    if (rendition) {
      response.writeHead(200, { 'content-type': 'video/mp4', 'content-length': rendition.bytes.length });
      return response.end(rendition.bytes);
    }
    reply(404, { error: { type: 'not_found', messages: ['Not found'] } });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    add: (playbackId, bytes, duration) => void assets.set(playbackId, { bytes, duration }),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
