import type { ApiRouter } from '../../http/router.ts';
import type { MediaLibrary } from './library-service.ts';
import { registerLibraryRoutes } from './routes.ts';

/** The media library's routes. */
export function registerMediaLibrary(router: ApiRouter, library: MediaLibrary): void {
  registerLibraryRoutes(router, library);
}
