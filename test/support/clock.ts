import type { Clock } from '../../api/src/shared/clock.ts';

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  #now: number;

  constructor(start: Date = new Date()) {
    this.#now = start.getTime();
  }

  now(): Date {
    return new Date(this.#now);
  }

  advance(ms: number): void {
    this.#now += ms;
  }

  set(date: Date): void {
    this.#now = date.getTime();
  }
}
