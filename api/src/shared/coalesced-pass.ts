/**
 * A pass of work that runs once at a time: a kick while a pass runs asks for exactly one
 * more after it (kicks coalesce), so pollers and wake-ups never run it concurrently.
 */
export class CoalescedPass {
  readonly #pass: () => Promise<void>;
  readonly #onError: (error: unknown) => void;
  #running: Promise<void> | undefined;
  #again = false;

  constructor(pass: () => Promise<void>, onError: (error: unknown) => void) {
    this.#pass = pass;
    this.#onError = onError;
  }

  kick(): void {
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = this.#pass()
      .catch(this.#onError)
      .finally(() => {
        this.#running = undefined;
        if (this.#again) {
          this.#again = false;
          this.kick();
        }
      });
  }

  /** Resolves when no pass is running (a pass asked for meanwhile included). */
  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }
}
