import { randomUUID } from 'node:crypto';
import type { EntityManager, EntityName, FilterQuery, QueryOrderMap } from '@mikro-orm/postgresql';
import { ownedBy } from '../accounts/ownership.ts';
import { LimitReached } from '../shared/errors.ts';

/** What every preset row has: an owner, an age and, for kinds with a default, the flag. */
export interface PresetRow {
  id: string;
  userId: string;
  createdAt: Date;
  isDefault?: boolean;
}

/** What tells one kind of preset from another; the rules (ownership, order, limit, default) are shared. */
export interface PresetKind<Row extends PresetRow> {
  entity: EntityName<Row>;
  /** Names the per-user advisory lock that serialises changes to this kind. */
  lockName: string;
  /** How many one user may keep; absent: no limit. */
  limit?: number;
  /** Whether presets of this kind carry is_default (at most one per user). */
  hasDefault: boolean;
}

/** One kind of a user's presets: listing, creation within the limit, changes, deletion. */
export class UserPresets<Row extends PresetRow> {
  readonly #kind: PresetKind<Row>;

  constructor(kind: PresetKind<Row>) {
    this.#kind = kind;
  }

  get hasDefault(): boolean {
    return this.#kind.hasDefault;
  }

  /** The default first (kinds with one), then oldest first. */
  list(em: EntityManager, userId: string): Promise<Row[]> {
    const orderBy = [...(this.#kind.hasDefault ? [{ isDefault: 'desc' }] : []), { createdAt: 'asc' }, { id: 'asc' }] as unknown as QueryOrderMap<Row>[];
    return em.find(this.#kind.entity, this.#of(userId), { orderBy });
  }

  async create(em: EntityManager, userId: string, properties: Partial<Row>): Promise<Row> {
    return em.transactional(async (tx) => {
      await this.#lock(tx, userId);
      // Under the lock the count includes every creation committed before: concurrent ones cannot pass the limit.
      const { limit } = this.#kind;
      if (limit !== undefined && (await tx.count(this.#kind.entity, this.#of(userId))) >= limit) {
        throw LimitReached('preset.limit_reached', { params: { max: limit }, code: 'PresetLimitReached' });
      }
      const preset = tx.create(this.#kind.entity, { ...properties, id: randomUUID(), userId } as never) as Row;
      await this.#keepOneDefault(tx, preset, properties);
      await tx.flush();
      return preset;
    });
  }

  async update(em: EntityManager, userId: string, presetId: string, properties: Partial<Row>): Promise<Row> {
    return em.transactional(async (tx) => {
      await this.#lock(tx, userId);
      const preset = await this.#owned(tx, userId, presetId);
      tx.assign(preset, properties as never);
      await this.#keepOneDefault(tx, preset, properties);
      await tx.flush();
      return preset;
    });
  }

  async delete(em: EntityManager, userId: string, presetId: string): Promise<void> {
    const preset = await this.#owned(em, userId, presetId);
    await em.nativeDelete(this.#kind.entity, { id: preset.id } as FilterQuery<Row>);
  }

  /** Account deletion: every preset of this kind of the user. */
  async deleteAllOf(em: EntityManager, userId: string): Promise<void> {
    await em.nativeDelete(this.#kind.entity, this.#of(userId));
  }

  /** At most one default per user: choosing one clears the others (the caller holds the user's lock). */
  async #keepOneDefault(em: EntityManager, preset: Row, properties: Partial<Row>): Promise<void> {
    if (!this.#kind.hasDefault || properties.isDefault !== true) return;
    await em.nativeUpdate(this.#kind.entity, { userId: preset.userId, isDefault: true, id: { $ne: preset.id } } as FilterQuery<Row>, { isDefault: false } as never);
  }

  /** Serialises changes to one user's presets of this kind, so two requests cannot pass the limit nor leave two defaults. */
  async #lock(em: EntityManager, userId: string): Promise<void> {
    await em.getConnection().execute(`select pg_advisory_xact_lock(hashtext(? || ':' || ?))`, [this.#kind.lockName, userId], 'all', em.getTransactionContext());
  }

  async #owned(em: EntityManager, userId: string, presetId: string): Promise<Row> {
    return ownedBy(await em.findOne(this.#kind.entity, { id: presetId } as FilterQuery<Row>), userId, { notFound: 'preset.not_found' });
  }

  #of(userId: string): FilterQuery<Row> {
    return { userId } as FilterQuery<Row>;
  }
}
