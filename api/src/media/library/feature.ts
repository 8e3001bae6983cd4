import type { MediaLibrary } from './library-service.ts';
import { registerLibraryRoutes } from './routes.ts';
import type { AppRouter } from '../../accounts/guards.ts';

/** The media library's routes. */
export function registerMediaLibrary(router: AppRouter, library: MediaLibrary): void {
  registerLibraryRoutes(router, library);
}
