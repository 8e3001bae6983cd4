import { NotFound } from '../shared/errors.ts';
import type { MessageKey } from '../i18n/index.ts';

/**
 * Another user's resource answers exactly like a missing one (404), so identifiers
 * reveal nothing about what other users have. Use it wherever a row is loaded by id:
 *
 *   const item = ownedBy(await em.findOne(MediaItem, { id }), auth.user.id);
 *   const file = ownedBy(row, userId, { owner: (f) => f.uploaderId, notFound: 'media.not_found' });
 */
export function ownedBy<T extends { userId: string }>(resource: T | null | undefined, userId: string, options?: { notFound?: MessageKey }): T;
export function ownedBy<T>(resource: T | null | undefined, userId: string, options: { owner: (resource: T) => string; notFound?: MessageKey }): T;
export function ownedBy<T>(
  resource: T | null | undefined,
  userId: string,
  options: { owner?: (resource: T) => string; notFound?: MessageKey } = {},
): T {
  const owner = options.owner ?? ((r: T) => (r as { userId: string }).userId);
  if (resource === null || resource === undefined || owner(resource) !== userId) throw NotFound(options.notFound ?? 'http.404');
  return resource;
}
