import { randomBytes } from 'node:crypto';
import bcrypt from 'bcrypt';

/** bcrypt hashing at the configured cost (BCRYPT_COST). */
export class Passwords {
  readonly #cost: number;
  /** Made at startup, at the same cost: a lazy one would make the first unknown login slower, not as slow. */
  readonly #decoy: Promise<string>;

  constructor(cost: number) {
    this.#cost = cost;
    this.#decoy = this.hash(randomBytes(16).toString('hex'));
  }

  hash(password: string): Promise<string> {
    return bcrypt.hash(password, this.#cost);
  }

  /**
   * Whether `password` matches `hash`: exactly one bcrypt comparison per call. Without a
   * hash (unknown user, identity-provider account) it compares against the decoy, so
   * the answer takes as long either way.
   */
  async matches(password: string, hash: string | null | undefined): Promise<boolean> {
    if (hash) return bcrypt.compare(password, hash);
    await bcrypt.compare(password, await this.#decoy);
    return false;
  }
}
