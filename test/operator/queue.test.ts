import { expect } from 'chai';
import { backoffDelay, WorkQueue } from '../../operator/src/queue.ts';
import type { WorkQueueOptions } from '../../operator/src/queue.ts';
import { eventually } from '../support/wait.ts';

/** One turn of the event loop (timers due within `ms` run first): lets the queue's microtasks and due timers run. */
const tick = (ms = 0) => new Promise((resolve) => setTimeout(resolve, ms));

/** A queue whose runs wait until the test releases them, recording what ran and what overlapped. */
function recordingQueue(options: Partial<WorkQueueOptions> = {}) {
  const runs: string[] = [];
  const overlaps: string[] = [];
  const running = new Set<string>();
  const gates = new Map<string, (() => void)[]>();
  const queue = new WorkQueue({
    concurrency: 4,
    retryBaseMs: 20,
    retryMaxMs: 1000,
    async process(key) {
      if (running.has(key)) overlaps.push(key);
      running.add(key);
      runs.push(key);
      try {
        await new Promise<void>((resolve) => gates.set(key, [...(gates.get(key) ?? []), resolve]));
      } finally {
        running.delete(key);
      }
    },
    ...options,
  });
  /** Lets the run of `key` in progress finish (failing loudly when none starts), then one turn for what follows. */
  const release = async (key: string) => {
    const open = await eventually(async () => gates.get(key)?.shift(), `a run of ${key} to release`, 2000, 2);
    open();
    await tick();
  };
  return { queue, runs, overlaps, release };
}

describe('operator work queue', () => {
  it('one key is never processed twice at once: an event during a run runs it once more afterwards', async () => {
    const { queue, runs, overlaps, release } = recordingQueue();
    queue.add('ns/a');
    await tick();
    queue.add('ns/a');
    queue.add('ns/a');
    expect(queue.active).to.deep.equal(['ns/a']);
    await release('ns/a');
    await release('ns/a');
    expect(runs).to.deep.equal(['ns/a', 'ns/a']);
    expect(overlaps).to.deep.equal([]);
    await queue.stop();
  });

  it('repeated events for a waiting key coalesce into one run, in first-come order', async () => {
    const { queue, runs, release } = recordingQueue({ concurrency: 1 });
    queue.add('ns/busy');
    await tick();
    for (const key of ['ns/b', 'ns/c', 'ns/b', 'ns/b', 'ns/c']) queue.add(key);
    expect(queue.depth).to.equal(2);
    await release('ns/busy');
    await release('ns/b');
    await release('ns/c');
    expect(runs).to.deep.equal(['ns/busy', 'ns/b', 'ns/c']);
    await queue.stop();
  });

  it('different keys run side by side up to the concurrency', async () => {
    const { queue, release } = recordingQueue({ concurrency: 2 });
    for (const key of ['ns/a', 'ns/b', 'ns/c']) queue.add(key);
    await tick();
    expect(queue.active).to.deep.equal(['ns/a', 'ns/b']);
    expect(queue.depth).to.equal(1);
    await release('ns/a');
    expect(queue.active).to.deep.equal(['ns/b', 'ns/c']);
    await release('ns/b');
    await release('ns/c');
    await queue.stop();
  });

  it('a failed run is retried with growing backoff and reported each time; success resets it', async () => {
    let attempts = 0;
    const attemptsBeforeRetry: number[] = [];
    const errors: { attempt: number; retryInMs: number }[] = [];
    let failuresLeft = 3;
    const queue = new WorkQueue({
      concurrency: 1,
      retryBaseMs: 10,
      retryMaxMs: 1000,
      async process() {
        attempts += 1;
        if (failuresLeft-- > 0) throw new Error('API server unavailable');
      },
      onError: (_key, _error, attempt, retryInMs) => {
        errors.push({ attempt, retryInMs });
        setTimeout(() => attemptsBeforeRetry.push(attempts), retryInMs - 1);
      },
    });
    queue.add('ns/a');
    await eventually(async () => (attempts >= 4 ? true : undefined), 'the fourth attempt', 2000, 5);
    expect(errors).to.deep.equal([
      { attempt: 1, retryInMs: 10 },
      { attempt: 2, retryInMs: 20 },
      { attempt: 3, retryInMs: 40 },
    ]);
    expect(attempts).to.equal(4);
    // Each retry waited for its backoff: a timer set when the failure was reported, due 1 ms before
    // the retry's, found the retry not yet run (timers run in the order they are due, whatever the load).
    expect(attemptsBeforeRetry).to.deep.equal([1, 2, 3]);
    await queue.stop();
  });

  it('backoff doubles from the base and stops at the cap', () => {
    expect([1, 2, 3, 4, 10, 100].map((attempt) => backoffDelay(attempt, 500, 5000))).to.deep.equal([500, 1000, 2000, 4000, 5000, 5000]);
  });

  it('stop() waits for the runs in flight, drops waiting keys and pending retries, and takes no more', async () => {
    const calls: string[] = [];
    const failing = new WorkQueue({
      concurrency: 1,
      retryBaseMs: 30,
      retryMaxMs: 30,
      async process(key) {
        calls.push(key);
        throw new Error('fails');
      },
    });
    failing.add('ns/retry');
    await eventually(async () => (calls.length === 1 ? true : undefined), 'the first run', 2000, 1);
    await failing.stop();
    failing.add('ns/late');
    // A timer due after the dropped retry (30 ms) would have been: timers run in the order they are due,
    // so a retry stop() failed to drop would have run (and been recorded) before this one.
    await tick(31);
    expect(calls).to.deep.equal(['ns/retry']);

    const { queue, runs, release } = recordingQueue({ concurrency: 1 });
    queue.add('ns/a');
    queue.add('ns/b');
    await tick();
    let stopped = false;
    const stopping = queue.stop().then(() => (stopped = true));
    // ns/a's run holds its gate until release() below: stop() cannot have finished, however long this turn.
    await tick();
    expect(stopped).to.equal(false);
    await release('ns/a');
    await stopping;
    expect(runs).to.deep.equal(['ns/a']);
  });

  it('the depth callback follows the waiting keys', async () => {
    const depths: number[] = [];
    const { queue, release } = recordingQueue({ concurrency: 1, onDepth: (depth) => depths.push(depth) });
    queue.add('ns/a');
    queue.add('ns/b');
    await tick();
    expect(depths.at(-1)).to.equal(1);
    await release('ns/a');
    expect(depths.at(-1)).to.equal(0);
    await release('ns/b');
    await queue.stop();
  });
});
