import type { UserRow } from './entities.ts';

/** The columns of a user read as a plain row on every authenticated request (by session or by API key). */
export const USER_COLUMNS = ['id', 'name', 'username', 'email', 'password_hash', 'email_verified', 'locale', 'is_superuser', 'storage_used_bytes', 'created_at'] as const;

export interface UserColumns {
  id: string;
  name: string;
  username: string;
  email: string;
  password_hash: string | null;
  email_verified: boolean;
  locale: string;
  is_superuser: boolean;
  /** int8 arrives as text. */
  storage_used_bytes: string;
  created_at: Date;
}

/** The user of such a row, as a plain object: no entity to hydrate. */
export function userOfColumns(row: UserColumns): UserRow {
  return {
    id: row.id,
    name: row.name,
    username: row.username,
    email: row.email,
    passwordHash: row.password_hash,
    emailVerified: row.email_verified,
    locale: row.locale,
    isSuperuser: row.is_superuser,
    storageUsedBytes: Number(row.storage_used_bytes),
    createdAt: row.created_at,
  };
}
