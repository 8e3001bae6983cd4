import type { EntityManager } from '@mikro-orm/postgresql';
import { negotiateLocale } from '../i18n/locales.ts';
import type { JobFailed } from '../jobs/completion.ts';
import { failureText } from '../i18n/job-texts.ts';

/** The media_files columns of a failure: the English text plus its code and params. */
export function failureColumns(failure: JobFailed): { error: string; errorCode: string | null; errorParams: Record<string, string | number> | null } {
  return { error: failure.error, errorCode: failure.code ?? null, errorParams: failure.code ? (failure.params ?? null) : null };
}

/**
 * The failure's text for each owner, in the owner's own language (users.locale),
 * read in the caller's transaction; `media_failed.error` carries it.
 */
export async function failureTextsForOwners(em: EntityManager, ownerIds: readonly string[], failure: JobFailed): Promise<(ownerId: string) => string> {
  const ids = [...new Set(ownerIds)];
  const users =
    ids.length > 0
      ? await em.getConnection().execute<{ id: string; locale: string }[]>(`select id, locale from users where id in (${ids.map(() => '?').join(', ')})`, ids, 'all', em.getTransactionContext())
      : [];
  const locales = new Map(users.map((user) => [user.id, negotiateLocale(user.locale)]));
  return (ownerId) => failureText(locales.get(ownerId) ?? 'en', failure.code, failure.params, failure.error);
}
