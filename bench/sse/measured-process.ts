/**
 * The measuring side of a server process the SSE bench starts (the api, or the floor under
 * it): on the bench's request over IPC, a full garbage collection, then the process's
 * figures. Such a process runs with --expose-gc and an IPC channel.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PerformanceObserver, monitorEventLoopDelay } from 'node:perf_hooks';
import { writeHeapSnapshot } from 'node:v8';

/** What the bench reads of a measured process. */
export interface ProcessMeasurement {
  rssBytes: number;
  heapUsedBytes: number;
  /** Objects the process watches (the api: EntityManagers of stream requests) still reachable after the collection. */
  liveWatched: number;
  openConnections: number;
  /** CPU time the process had used (user + system, ms) when asked, and when answering (after the forced collections). */
  cpuMs: number;
  cpuMsAnswered: number;
  /** The event loop's delay since the previous measurement: how late the process ran what was due. */
  loopDelayP99Ms: number;
  /** Garbage collection since the previous measurement (the bench's own forced collections left out): the longest pause and all of them. */
  gcMaxPauseMs: number;
  gcTotalPauseMs: number;
}

export type MeasuredMessage = { ready: true; url: string } | { measurement: ProcessMeasurement };
export type BenchRequest = { measure?: boolean; heapSnapshot?: string };

export interface MeasuredServer {
  server: Server;
  /** After the collection: how many watched objects are still reachable. */
  liveWatched?: () => number;
  close(): Promise<void>;
}

/** This process's garbage-collection pauses while `counting`: the longest and their sum, in ms. */
export interface GcPauses {
  max: number;
  total: number;
  counting: boolean;
}

/** Starts counting this process's garbage-collection pauses. */
export function watchGcPauses(): GcPauses {
  const pauses: GcPauses = { max: 0, total: 0, counting: true };
  new PerformanceObserver((list) => {
    if (!pauses.counting) return;
    for (const entry of list.getEntries()) {
      pauses.max = Math.max(pauses.max, entry.duration);
      pauses.total += entry.duration;
    }
  }).observe({ entryTypes: ['gc'] });
  return pauses;
}

const cpuMsNow = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
const macrotask = () => new Promise((resolve) => setImmediate(resolve));

/** Answers the bench's measurement requests for a listening server, and tells the bench its address. */
export function serveMeasurements({ server, liveWatched = () => 0, close }: MeasuredServer): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  const send = process.send?.bind(process);
  if (!gc || !send) throw new Error('run me from bench/sse/run.ts: node --expose-gc with an IPC channel');
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  const gcPauses = watchGcPauses();

  async function measure(): Promise<ProcessMeasurement> {
    // Read before the forced collections, and reset after them, so no window counts the bench's own GC.
    const loopDelayP99Ms = loopDelay.percentile(99) / 1e6;
    const pauses = { gcMaxPauseMs: gcPauses.max, gcTotalPauseMs: gcPauses.total };
    gcPauses.counting = false;
    const cpuMs = cpuMsNow();
    // WeakRefs made in this turn stay alive until it ends; more rounds let finalizable garbage go too.
    for (let round = 0; round < 3; round++) {
      await macrotask();
      gc!();
    }
    await macrotask();
    const openConnections = await new Promise<number>((resolve) => server.getConnections((_error, count) => resolve(count)));
    const { rss, heapUsed } = process.memoryUsage();
    loopDelay.reset();
    // gc entries are delivered after the turn that made them: the forced collections' entries come before this one
    await macrotask();
    gcPauses.counting = true;
    gcPauses.max = 0;
    gcPauses.total = 0;
    return { rssBytes: rss, heapUsedBytes: heapUsed, liveWatched: liveWatched(), openConnections, cpuMs, cpuMsAnswered: cpuMsNow(), loopDelayP99Ms, ...pauses };
  }

  process.on('message', (message: BenchRequest) => {
    if (message.heapSnapshot) writeHeapSnapshot(message.heapSnapshot);
    if (message.measure) void measure().then((measurement) => send({ measurement } satisfies MeasuredMessage));
  });
  process.on('disconnect', () => {
    server.closeAllConnections();
    server.close();
    void close().then(() => process.exit(0));
  });
  const { address, port } = server.address() as AddressInfo;
  send({ ready: true, url: `http://${address}:${port}` } satisfies MeasuredMessage);
}
