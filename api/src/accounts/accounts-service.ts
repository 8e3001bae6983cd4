import { randomBytes, randomUUID } from 'node:crypto';
import { raw, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { query, statement } from '../db/statements.ts';
import type { Logger } from 'pino';
import { InvalidInput, Conflict, Forbidden, RateLimited, Unauthenticated } from '../shared/errors.ts';
import { LOCALES, DEFAULT_LOCALE, translate, type Locale } from '../i18n/index.ts';
import type { Clock } from '../shared/clock.ts';
import { emailHash, type BillingService } from '../billing/billing-service.ts';
import { User, UserIdentity, type UserRow } from './entities.ts';
import type { LoginLockout } from './lockout.ts';
import type { Mail, Mailer } from './mailer.ts';
import type { ProviderIdentity } from './oidc.ts';
import type { Passwords } from './passwords.ts';
import type { Session, SessionStore } from './sessions.ts';
import { USER_COLUMNS, userOfColumns, type UserColumns } from './user-row.ts';
import type { ApiKeys } from '../api-keys/service.ts';
import { InvalidToken, UsedToken, type EmailTokenClaims, type EmailTokens, type TokenPurpose } from './tokens.ts';

/** The user as the api shows it: never the password or its hash. */
export interface UserView {
  id: string;
  name: string;
  username: string;
  email: string;
  email_verified: boolean;
  locale: string;
  is_superuser: boolean;
  storage_used_bytes: number;
  /** False for accounts that only sign in through the identity provider (change-password needs no current one). */
  has_password: boolean;
  created_at: string;
}

export function userView(user: UserRow): UserView {
  return {
    id: user.id,
    name: user.name,
    username: user.username,
    email: user.email,
    email_verified: user.emailVerified,
    locale: user.locale,
    is_superuser: user.isSuperuser,
    storage_used_bytes: Number(user.storageUsedBytes),
    has_password: user.passwordHash !== null && user.passwordHash !== undefined,
    created_at: user.createdAt.toISOString(),
  };
}

export interface NewAccount {
  name: string;
  username: string;
  email: string;
  password: string | null;
  locale: Locale;
}

/** A session just started: the cookie secret, the session and its first CSRF token. */
export interface StartedSession {
  cookie: string;
  session: Session;
  csrfToken: string;
}

/**
 * Work another feature must do when an account is deleted: its rows, in the deleting
 * transaction; what must wait for the commit (stored objects) it returns as a callback.
 */
export type AccountDeletionStep = (em: EntityManager, user: UserRow) => Promise<AfterAccountDeletion | void>;
/** Runs once the deletion has committed; a failure is logged, never undoes the deletion. */
type AfterAccountDeletion = () => Promise<void>;

export interface AccountsDeps {
  /** Its pool serves the session's user on every authenticated request. */
  orm: MikroORM;
  clock: Clock;
  logger: Logger;
  passwords: Passwords;
  tokens: EmailTokens;
  sessions: SessionStore;
  /** The user's API keys; a password change or reset revokes them. */
  apiKeys: ApiKeys;
  lockout: LoginLockout;
  mailer: Mailer;
  billing: BillingService;
  /** The public address e-mailed links point at; read when a link is made. */
  baseUrl: () => string;
}

/**
 * Accounts: signup and verification, password login with lockout, password and
 * e-mail changes, identity-provider sign-in, profile and deletion. No answer it gives
 * tells a caller whether an e-mail address is registered.
 */
export class AccountsService {
  readonly sessions: SessionStore;
  readonly apiKeys: ApiKeys;
  readonly #deps: AccountsDeps;
  readonly #deletionSteps: AccountDeletionStep[] = [];
  readonly #deliveries = new Set<Promise<void>>();

  constructor(deps: AccountsDeps) {
    this.#deps = deps;
    this.sessions = deps.sessions;
    this.apiKeys = deps.apiKeys;
  }

  /** Other features register what must go with an account (run in the deleting transaction, before the user row; a returned callback runs after the commit). */
  onAccountDeletion(step: AccountDeletionStep): void {
    this.#deletionSteps.push(step);
  }

  async findUser(em: EntityManager, userId: string): Promise<UserRow | null> {
    return em.findOne(User, { id: userId }, { refresh: true });
  }

  /**
   * The user behind a session, read on every authenticated request (so a change or a
   * deletion, however made, shows at once) with one prepared statement, as a plain
   * object: no entity to hydrate. Methods that change a user load their own managed row.
   */
  async sessionUser(userId: string): Promise<UserRow | null> {
    const [row] = await query(this.#deps.orm, SESSION_USER, [userId]);
    return row ? userOfColumns(row) : null;
  }

  /**
   * Signup. A taken username is a 409 (usernames are public); a taken e-mail address
   * gets the same 201-shaped answer as a new account, no account, and a mail to the
   * address's owner, so the answer reveals nothing.
   */
  async signUp(em: EntityManager, input: NewAccount & { password: string }): Promise<UserView> {
    const passwordHash = await this.#deps.passwords.hash(input.password);
    if (await this.#usernameTaken(em, input.username)) throw Conflict('users.username_taken');
    const existing = await em.findOne(User, { email: input.email });
    if (existing) return this.#lookalikeSignup(existing, input);
    let user: UserRow;
    try {
      user = await em.transactional(async (tx) => this.#createUser(tx, { ...input, passwordHash, emailVerified: false }));
    } catch (error) {
      if (!(error instanceof UniqueConstraintViolationException)) throw error;
      if (error.message.includes('users_username_lower_unique')) throw Conflict('users.username_taken');
      return this.#lookalikeSignup(await em.findOneOrFail(User, { email: input.email }), input);
    }
    await this.#sendVerification(user);
    return userView(user);
  }

  /** An account created already verified (seeding, tests, identity-provider signup). */
  async createVerifiedAccount(em: EntityManager, input: NewAccount & { superuser?: boolean }): Promise<UserRow> {
    const passwordHash = input.password === null ? null : await this.#deps.passwords.hash(input.password);
    return em.transactional(async (tx) => {
      const user = await this.#createUser(tx, { ...input, passwordHash, emailVerified: true });
      if (input.superuser) user.isSuperuser = true;
      await tx.flush();
      return user;
    });
  }

  /** Always answers the same; mails a new link only to an account still awaiting verification. */
  async resendVerification(em: EntityManager, email: string): Promise<void> {
    const user = await em.findOne(User, { email });
    if (user && !user.emailVerified) await this.#sendVerification(user);
  }

  /** Marks the address verified, grants the trial if it is still available, sends the welcome mail. */
  async verifyEmail(em: EntityManager, token: string): Promise<UserRow> {
    const claims = await this.#readToken(token, 'verify-email');
    const user = await this.findUser(em, claims.userId);
    if (!user || user.email !== claims.email) throw InvalidInput('auth.token_invalid');
    if (user.emailVerified) return user;
    user.emailVerified = true;
    await em.flush();
    await this.#deps.billing.grantTrialIfAvailable(em, user);
    this.#send(user.email, user.locale, 'welcome', { name: user.name, link: `${this.#deps.baseUrl()}/studio/` });
    return user;
  }

  /**
   * Password login with the username or the e-mail address. Failures count per IP and
   * per account; a lockout (or the failure that causes one) is 429 with Retry-After.
   * The attempt reserves its place in the count before the password is compared, so
   * concurrent guesses get no more comparisons than sequential ones, and a right password
   * is refused if a concurrent failure set a lock meanwhile. Unknown users and accounts
   * without a password are compared against a decoy, so every attempt costs the same.
   */
  async logIn(em: EntityManager, attempt: { identifier: string; password: string; rememberMe: boolean; ip: string }): Promise<{ user: UserRow } & StartedSession> {
    const identifier = attempt.identifier.trim();
    const user = identifier.includes('@')
      ? await em.findOne(User, { email: identifier.toLowerCase() })
      : await this.#userByUsername(em, identifier);
    const { lockout, passwords } = this.#deps;
    const reservation = await lockout.reserve([`ip:${attempt.ip}`, user ? `account:${user.id}` : `name:${identifier.toLowerCase()}`]);
    if (!reservation.reserved) throw RateLimited(reservation.retryAfterSeconds, reservation.locked ? 'auth.locked_out' : 'auth.login_busy');
    const reserved = reservation.attempt;
    let matched: boolean;
    try {
      matched = await passwords.matches(attempt.password, user?.passwordHash);
    } catch (error) {
      await lockout.release(reserved);
      throw error;
    }
    if (!user || !matched) {
      const lockedNow = await lockout.failed(reserved);
      if (lockedNow > 0) throw RateLimited(lockedNow, 'auth.locked_out');
      throw Unauthenticated('auth.invalid_credentials');
    }
    // An unverified account is neither a failure nor a success, but still no answer past a lock.
    const lockedMeanwhile = await lockout.matched(reserved, { clear: user.emailVerified });
    if (lockedMeanwhile > 0) throw RateLimited(lockedMeanwhile, 'auth.locked_out');
    if (!user.emailVerified) throw Forbidden('auth.email_not_verified');
    return { user, ...(await this.startSession(user, attempt.rememberMe)) };
  }

  async startSession(user: UserRow, rememberMe: boolean): Promise<StartedSession> {
    const { cookie, session } = await this.sessions.create(user.id, rememberMe);
    return { cookie, session, csrfToken: await this.sessions.issueCsrfToken(session) };
  }

  /** Always answers the same; mails a reset link only when the address has an account. */
  async forgotPassword(em: EntityManager, email: string): Promise<void> {
    const user = await em.findOne(User, { email });
    if (!user) return;
    const token = await this.#deps.tokens.issue('reset-password', user.id, user.email);
    this.#send(user.email, user.locale, 'reset', { name: user.name, link: this.#link('/studio/reset-password', token) }, 'POST /api/v1/auth/reset-password {"token": "…", "new_password": "…"}');
  }

  /** A reset link works once within its hour; afterwards every session of the user ends. */
  async resetPassword(em: EntityManager, token: string, newPassword: string): Promise<void> {
    const claims = await this.#readToken(token, 'reset-password');
    const user = await this.findUser(em, claims.userId);
    if (!user || user.email !== claims.email) throw InvalidInput('auth.token_invalid');
    await this.#useToken(claims);
    user.passwordHash = await this.#deps.passwords.hash(newPassword);
    await em.flush();
    await this.#afterCredentialChange(user);
    await this.#deps.lockout.clear([`account:${user.id}`]);
  }

  /**
   * Changes the password, then ends every session. Accounts with a password must give
   * it; identity-provider accounts without one may set a first one.
   */
  async changePassword(em: EntityManager, caller: UserRow, change: { currentPassword?: string | undefined; newPassword: string }): Promise<void> {
    const user = await this.#managed(em, caller);
    if (user.passwordHash) {
      if (!change.currentPassword) throw InvalidInput('auth.current_password_required');
      if (!(await this.#deps.passwords.matches(change.currentPassword, user.passwordHash))) throw InvalidInput('auth.password_incorrect');
    }
    user.passwordHash = await this.#deps.passwords.hash(change.newPassword);
    await em.flush();
    await this.#afterCredentialChange(user);
  }

  /** 400 when the password is wrong (or the account has none); nothing else happens either way. */
  async verifyPassword(user: UserRow, password: string): Promise<void> {
    if (!(await this.#deps.passwords.matches(password, user.passwordHash))) throw InvalidInput('auth.password_incorrect');
  }

  /**
   * Mails a confirmation link to the new address and a notice to the current one, whether
   * or not the new address is taken (confirming then answers 409), so neither the answer
   * nor the mails reveal it. The link replaces any earlier one. Asking for the current
   * address changes nothing.
   */
  async requestEmailChange(user: UserRow, change: { newEmail: string; password: string }): Promise<void> {
    await this.verifyPassword(user, change.password);
    if (change.newEmail === user.email) return;
    const token = await this.#deps.tokens.issue('change-email', user.id, change.newEmail);
    this.#send(change.newEmail, user.locale, 'email_change', { name: user.name, link: this.#link('/studio/confirm-email-change', token) }, 'POST /api/v1/auth/confirm-email-change {"token": "…"}');
    this.#send(user.email, user.locale, 'email_change_notice', { name: user.name, new_email: change.newEmail, link: `${this.#deps.baseUrl()}/studio/forgot-password` });
  }

  /** Public: the token names the user and the new address. 409 if the address was taken since. */
  async confirmEmailChange(em: EntityManager, token: string): Promise<UserRow> {
    const claims = await this.#readToken(token, 'change-email');
    const user = await this.findUser(em, claims.userId);
    if (!user) throw InvalidInput('auth.token_invalid');
    const holder = await em.findOne(User, { email: claims.email });
    if (holder && holder.id !== user.id) throw Conflict('auth.email_taken');
    await this.#useToken(claims);
    user.email = claims.email;
    user.emailVerified = true;
    try {
      await em.flush();
    } catch (error) {
      if (error instanceof UniqueConstraintViolationException) throw Conflict('auth.email_taken');
      throw error;
    }
    // Reset links went to the old address, and no older change link may switch it back.
    await this.#deps.tokens.revokeAll(user.id);
    return user;
  }

  async updateProfile(em: EntityManager, caller: UserRow, change: { name?: string | undefined; locale?: Locale | undefined }): Promise<UserRow> {
    const user = await this.#managed(em, caller);
    if (change.name !== undefined) user.name = change.name;
    if (change.locale !== undefined) user.locale = change.locale;
    await em.flush();
    return user;
  }

  /**
   * Deletes the account and its data (every registered deletion step, then the user row,
   * whose subscription, credits and identities cascade), leaves the hashed-address
   * tombstone that remembers the trial, and ends every session.
   */
  async deleteAccount(em: EntityManager, user: UserRow, password: string | undefined): Promise<void> {
    if (user.passwordHash) {
      if (!password) throw InvalidInput('auth.current_password_required');
      await this.verifyPassword(user, password);
    }
    const afterCommit: AfterAccountDeletion[] = [];
    await em.transactional(async (tx) => {
      for (const step of this.#deletionSteps) {
        const after = await step(tx, user);
        if (after) afterCommit.push(after);
      }
      const trialUsed = await this.#deps.billing.trialUsed(tx, user);
      await tx.execute(
        `insert into deleted_accounts (email_hash, trial_used, deleted_at) values (?, ?, ?)
         on conflict (email_hash) do update set trial_used = deleted_accounts.trial_used or excluded.trial_used, deleted_at = excluded.deleted_at`,
        [emailHash(user.email), trialUsed, this.#deps.clock.now()],
      );
      await tx.execute(`delete from users where id = ?`, [user.id]);
    });
    em.clear();
    await this.sessions.endAll(user.id);
    for (const after of afterCommit) {
      await after().catch((error: unknown) => this.#deps.logger.warn({ err: error, userId: user.id }, 'an after-deletion step failed'));
    }
  }

  /**
   * The user behind a provider identity: the linked one; else the account with the same
   * address, which the provider has verified, gets linked; else a new verified account
   * with the trial. `created` tells which. Linking an account whose address was never
   * verified drops its password and ends its sessions: whoever registered it had not
   * proven the address, so their password must not keep working on the owner's account.
   */
  async signInWithIdentity(em: EntityManager, identity: ProviderIdentity, locale: Locale): Promise<{ user: UserRow; created: boolean }> {
    const link = await em.findOne(UserIdentity, { issuer: identity.issuer, subject: identity.subject }, { populate: ['user'] });
    if (link) return { user: link.user as UserRow, created: false };
    if (!identity.email || !identity.emailVerified) throw InvalidInput('auth.oauth_email_unverified');
    const email = identity.email;
    const existing = await em.findOne(User, { email });
    if (existing) {
      em.create(UserIdentity, { id: randomUUID(), user: existing, issuer: identity.issuer, subject: identity.subject, createdAt: this.#deps.clock.now() });
      const newlyVerified = !existing.emailVerified;
      existing.emailVerified = true;
      // A pre-registrant of someone else's address would otherwise keep a working password.
      if (newlyVerified) existing.passwordHash = null;
      await em.flush();
      if (newlyVerified) {
        await this.#afterCredentialChange(existing);
        await this.#deps.billing.grantTrialIfAvailable(em, existing);
      }
      return { user: existing, created: false };
    }
    const username = await this.#freeUsername(em, identity.preferredUsername ?? email.split('@')[0] ?? 'user');
    const user = await em.transactional(async (tx) => {
      const created = await this.#createUser(tx, {
        name: (identity.name ?? username).slice(0, 100),
        username,
        email,
        passwordHash: null,
        emailVerified: true,
        locale,
      });
      tx.create(UserIdentity, { id: randomUUID(), user: created, issuer: identity.issuer, subject: identity.subject, createdAt: this.#deps.clock.now() });
      await tx.flush();
      return created;
    });
    await this.#deps.billing.grantTrialIfAvailable(em, user);
    return { user, created: true };
  }

  /** Resolves when every mail handed to the mailer so far has been delivered or has failed. */
  async idle(): Promise<void> {
    await Promise.all([...this.#deliveries]);
  }

  /** The caller's row as the EntityManager tracks it, so a change to it is flushed (the session's user is a plain copy). */
  async #managed(em: EntityManager, caller: UserRow): Promise<UserRow> {
    const user = await this.findUser(em, caller.id);
    if (!user) throw Unauthenticated();
    return user;
  }

  /**
   * A password changed (or was dropped): every session ends, every API key is revoked (a key
   * minted from a stolen session must not outlive the password that session came from), and
   * every outstanding reset or e-mail-change link stops working.
   */
  async #afterCredentialChange(user: UserRow): Promise<void> {
    await this.#deps.tokens.revokeAll(user.id);
    await this.sessions.endAll(user.id);
    await this.apiKeys.revokeAll(user.id);
  }

  async #createUser(em: EntityManager, input: Omit<NewAccount, 'password'> & { passwordHash: string | null; emailVerified: boolean }): Promise<UserRow> {
    const user = em.create(User, {
      id: randomUUID(),
      name: input.name,
      username: input.username,
      email: input.email,
      passwordHash: input.passwordHash,
      emailVerified: input.emailVerified,
      locale: input.locale,
      createdAt: this.#deps.clock.now(),
    });
    this.#deps.billing.openSubscription(em, user);
    await em.flush();
    return user;
  }

  /**
   * The answer to a signup with a registered address. Its owner is told, in their
   * language: a still unverified account gets a fresh verification link (they likely
   * forgot they signed up), a verified one a note pointing at password reset.
   */
  async #lookalikeSignup(owner: UserRow, input: NewAccount): Promise<UserView> {
    if (owner.emailVerified) this.#send(owner.email, owner.locale, 'signup_attempt', { link: `${this.#deps.baseUrl()}/studio/forgot-password` });
    else await this.#sendVerification(owner);
    return {
      id: randomUUID(),
      name: input.name,
      username: input.username,
      email: input.email,
      email_verified: false,
      locale: input.locale,
      is_superuser: false,
      storage_used_bytes: 0,
      has_password: true,
      created_at: this.#deps.clock.now().toISOString(),
    };
  }

  async #sendVerification(user: UserRow): Promise<void> {
    const token = await this.#deps.tokens.issue('verify-email', user.id, user.email);
    this.#send(user.email, user.locale, 'verify', { name: user.name, link: this.#link('/studio/verify-email', token) }, 'POST /api/v1/auth/verify-email {"token": "…"}');
  }

  async #usernameTaken(em: EntityManager, username: string): Promise<boolean> {
    return (await this.#userByUsername(em, username)) !== null;
  }

  /** One query whether or not the name exists (the unique index is on lower(username)), so neither answers sooner. */
  async #userByUsername(em: EntityManager, username: string): Promise<UserRow | null> {
    return em.findOne(User, { [raw((alias) => `lower(${alias}.username)`)]: username.toLowerCase() });
  }

  /** A username from provider claims: allowed characters only, made unique with a suffix when taken. */
  async #freeUsername(em: EntityManager, wanted: string): Promise<string> {
    const base = wanted.replace(/[^A-Za-z0-9_.-]/g, '').slice(0, 32).padEnd(3, '0');
    let candidate = base;
    while (await this.#usernameTaken(em, candidate)) candidate = `${base}-${randomBytes(3).toString('hex')}`;
    return candidate;
  }

  async #readToken(token: string, purpose: TokenPurpose): Promise<EmailTokenClaims> {
    try {
      return await this.#deps.tokens.read(token, purpose);
    } catch (error) {
      if (error instanceof InvalidToken) throw InvalidInput('auth.token_invalid');
      throw error;
    }
  }

  async #useToken(claims: EmailTokenClaims): Promise<void> {
    try {
      await this.#deps.tokens.take(claims);
    } catch (error) {
      if (error instanceof UsedToken) throw InvalidInput('auth.token_used');
      if (error instanceof InvalidToken) throw InvalidInput('auth.token_invalid');
      throw error;
    }
  }

  #link(path: string, token: string): string {
    return `${this.#deps.baseUrl()}${path}?token=${encodeURIComponent(token)}`;
  }

  /**
   * Mails in the recipient's language, in the background: the answer must not wait for
   * SMTP, nor take longer when an address is registered.
   */
  #send(to: string, locale: string, kind: MailKind, params: Record<string, string>, apiAction?: string): void {
    const language = LOCALES.find((known) => known === locale) ?? DEFAULT_LOCALE;
    const mail: Mail = {
      to,
      template: kind,
      subject: translate(language, `auth.mail.${kind}.subject`, params),
      text: translate(language, `auth.mail.${kind}.body`, params),
      ...(params.link ? { link: params.link } : {}),
      ...(apiAction ? { apiAction } : {}),
    };
    const delivery = this.#deps.mailer.send(mail).catch((error: unknown) => {
      this.#deps.logger.warn({ err: error, to, kind }, 'mail not delivered');
    });
    this.#deliveries.add(delivery);
    void delivery.finally(() => this.#deliveries.delete(delivery));
  }
}

const SESSION_USER = statement<UserColumns>('accounts.session_user', `select ${USER_COLUMNS.join(', ')} from users where id = ?`);

type MailKind = 'verify' | 'welcome' | 'reset' | 'email_change' | 'email_change_notice' | 'signup_attempt';
