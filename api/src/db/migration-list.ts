import type { MigrationObject } from '@mikro-orm/core';

/**
 * The migrations the migrator runs: none listed here, so it reads the committed files in
 * ./migrations (the sources, `node api/src/main.ts`). The api's bundle (hack/bundle/build-api.ts)
 * replaces this module with one importing every migration file, each named by its file, in order.
 */
export const bundledMigrations: MigrationObject[] | undefined = undefined;
