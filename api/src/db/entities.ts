import type { EntitySchema } from '@mikro-orm/core';

/** Every entity of the service, one line per feature. */
export const entities: EntitySchema<any, any>[] = [];
