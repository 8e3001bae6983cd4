import { randomBytes } from 'node:crypto';
import bcrypt from 'bcrypt';

/** bcrypt hashing at the configured cost (BCRYPT_COST). */
export class Passwords {
  readonly #cost: number;
  #decoy: Promise<string> | undefined;

  constructor(cost: number) {
    this.#cost = cost;
  }

  hash(password: string): Promise<string> {
    return bcrypt.hash(password, this.#cost);
  }

  /**
   * Whether `password` matches `hash`. Without a hash (unknown user, identity-provider
   * account) a decoy is compared anyway, so the answer takes as long either way.
   */
  async matches(password: string, hash: string | null | undefined): Promise<boolean> {
    if (hash) return bcrypt.compare(password, hash);
    this.#decoy ??= this.hash(randomBytes(16).toString('hex'));
    await bcrypt.compare(password, await this.#decoy);
    return false;
  }
}
