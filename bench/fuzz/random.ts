/**
 * A seeded generator (splitmix32): one seed, the same cases in every run, so a failing
 * case is replayed by its seed alone.
 */
export class Seeded {
  #state: number;

  constructor(seed: number) {
    this.#state = seed >>> 0;
  }

  /** 0 ≤ x < 1 */
  next(): number {
    this.#state = (this.#state + 0x9e3779b9) >>> 0;
    let z = this.#state;
    z = Math.imul(z ^ (z >>> 16), 0x21f0aaad);
    z = Math.imul(z ^ (z >>> 15), 0x735a2d97);
    return ((z ^ (z >>> 15)) >>> 0) / 4294967296;
  }

  /** An integer, min ≤ x ≤ max. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from nothing');
    return items[Math.floor(this.next() * items.length)]!;
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  /** A generator of its own, derived from this one: one per operation keeps the cases of one stable when others change. */
  fork(label: string): Seeded {
    let hash = this.int(0, 0xffffffff);
    for (let index = 0; index < label.length; index++) hash = Math.imul(hash ^ label.charCodeAt(index), 0x01000193) >>> 0;
    return new Seeded(hash);
  }
}

/** The run's seed: `FUZZ_SEED` when set (decimal or 0x…), otherwise a fresh one, printed by the caller to replay it. */
export function seedFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const given = env.FUZZ_SEED?.trim();
  if (given) {
    const seed = Number(given);
    if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw new Error(`FUZZ_SEED must be an integer 0..2^32-1, got ${given}`);
    return seed;
  }
  return Math.floor(Math.random() * 0x100000000);
}
