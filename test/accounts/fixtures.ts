import { randomBytes, randomInt } from 'node:crypto';
import { Passwords } from '../../api/src/accounts/passwords.ts';
import { ManualClock } from '../support/clock.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { SmtpSink, type ReceivedMail } from '../support/smtp.ts';
import { Client, uniqueUsername } from '../support/users.ts';

export interface AccountsTestApp {
  app: TestApp;
  clock: ManualClock;
  smtp: SmtpSink;
  /** A fresh anonymous client with an address of its own (per-IP limits and lockouts). */
  client(headers?: Record<string, string>): Client;
  close(): Promise<void>;
}

/**
 * The real app with a hand-driven clock, a real SMTP sink, its own Redis key prefix
 * (limits and sessions of one suite never meet another's) and X-Forwarded-For trusted,
 * so each test client can come from its own IP.
 */
export async function startAccountsApp(env: Record<string, string> = {}): Promise<AccountsTestApp> {
  const clock = new ManualClock();
  const smtp = await SmtpSink.start();
  const app = await startTestApp(
    {
      SMTP_URL: smtp.url,
      TRUST_PROXY: 'true',
      REDIS_KEY_PREFIX: `${process.env.REDIS_KEY_PREFIX ?? 'cutroom-test:'}${randomBytes(4).toString('hex')}:`,
      ...env,
    },
    { clock },
  );
  return {
    app,
    clock,
    smtp,
    client: (headers = {}) => new Client(app, { ip: randomIp(), headers }),
    close: async () => {
      await app.close();
      await smtp.close();
    },
  };
}

export function randomIp(): string {
  return `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
}

export interface NewSignup {
  name: string;
  username: string;
  email: string;
  password: string;
}

export function newSignup(overrides: Partial<NewSignup> = {}): NewSignup {
  const username = overrides.username ?? uniqueUsername('signup');
  return { name: 'Ana Lima', username, email: `${username}@example.test`, password: 'correct horse battery', ...overrides };
}

/** The token carried by an e-mailed link (`…?token=…`). */
export function tokenOf(mail: ReceivedMail): string {
  const link = mail.links.find((candidate) => candidate.includes('token='));
  if (!link) throw new Error(`no link with a token in: ${mail.text}`);
  return new URL(link).searchParams.get('token')!;
}

/** Signs up over HTTP and follows the verification link from the real mail. */
export async function signUpVerified(
  fixture: AccountsTestApp,
  overrides: Partial<NewSignup> = {},
  headers: Record<string, string> = {},
): Promise<{ signup: NewSignup; client: Client; userId: string }> {
  const signup = newSignup(overrides);
  const client = fixture.client(headers);
  const since = fixture.smtp.messages.length;
  const created = await client.post('/api/v1/users/', signup);
  if (created.status !== 201) throw new Error(`signup failed: ${created.status} ${await created.text()}`);
  const { id } = (await created.json()) as { id: string };
  const mail = await fixture.smtp.waitFor({ to: signup.email, since, subject: /^Confirm/ });
  const verified = await client.post('/api/v1/auth/verify-email', { token: tokenOf(mail) });
  if (verified.status !== 200) throw new Error(`verification failed: ${verified.status} ${await verified.text()}`);
  return { signup, client, userId: id };
}

/** The bcrypt comparisons the app performs, counted (and held back at will) at its Passwords dependency. */
export interface PasswordComparisons {
  /** Comparisons begun since `watchPasswordComparisons`. */
  readonly started: number;
  /**
   * From now on, comparisons of passwords `which` accepts wait (as a slow bcrypt would)
   * until the returned function is called; one hold at a time.
   */
  hold(which?: (password: string) => boolean): () => void;
  /** Lets every held comparison go and puts Passwords back as it was. */
  restore(): void;
}

/** Watches every Passwords#matches, which performs exactly one bcrypt comparison per call. */
export function watchPasswordComparisons(): PasswordComparisons {
  const original = Passwords.prototype.matches;
  let started = 0;
  let held: { which: (password: string) => boolean; gate: Promise<void>; open: () => void } | undefined;
  const release = () => {
    held?.open();
    held = undefined;
  };
  Passwords.prototype.matches = async function matches(this: Passwords, password, hash) {
    started++;
    if (held?.which(password)) await held.gate;
    return original.call(this, password, hash);
  };
  return {
    get started() {
      return started;
    },
    hold(which = () => true) {
      release();
      let open = () => {};
      const gate = new Promise<void>((resolve) => (open = resolve));
      const hold = { which, gate, open };
      held = hold;
      return () => {
        hold.open();
        if (held === hold) held = undefined;
      };
    },
    restore() {
      release();
      Passwords.prototype.matches = original;
    },
  };
}
