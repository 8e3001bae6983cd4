/** Every slot is taken and the queue is full. */
export class SlotsFull extends Error {
  constructor() {
    super('Too many transcriptions at once: every recognizer is busy and the queue is full.');
    this.name = 'SlotsFull';
  }
}

/**
 * At most `concurrency` recognizer processes at once (each takes a core), and at most
 * `queueLength` requests waiting for one; a request beyond that is refused at once.
 */
export class RecognizerSlots {
  readonly #concurrency: number;
  readonly #queueLength: number;
  #running = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(concurrency: number, queueLength: number) {
    this.#concurrency = concurrency;
    this.#queueLength = queueLength;
  }

  /** Resolves with the slot's release once one is free; rejects with SlotsFull, or when `signal` aborts while waiting. */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#running < this.#concurrency) {
      this.#running += 1;
      return Promise.resolve(this.#release());
    }
    if (this.#waiting.length >= this.#queueLength) return Promise.reject(new SlotsFull());
    return new Promise((resolve, reject) => {
      const start = () => {
        signal?.removeEventListener('abort', leave);
        this.#running += 1;
        resolve(this.#release());
      };
      const leave = () => {
        this.#waiting.splice(this.#waiting.indexOf(start), 1);
        reject(signal?.reason);
      };
      this.#waiting.push(start);
      signal?.addEventListener('abort', leave, { once: true });
    });
  }

  #release(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#running -= 1;
      this.#waiting.shift()?.();
    };
  }
}
