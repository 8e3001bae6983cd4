import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { startTestApp, type LogLine, type TestApp } from '../support/harness.ts';
import { Client, createAccount } from '../support/users.ts';
import { newSignup, randomIp } from './fixtures.ts';

/** The app without SMTP_URL, so mails go to the log; its own Redis prefix keeps the per-IP limits apart. */
function startWithoutSmtp(nodeEnv: 'development' | 'production'): Promise<TestApp> {
  return startTestApp({
    NODE_ENV: nodeEnv,
    SMTP_URL: '',
    SECRET_KEY: randomBytes(24).toString('hex'),
    TRUST_PROXY: 'true',
    REDIS_KEY_PREFIX: `${process.env.REDIS_KEY_PREFIX ?? 'cutroom-test:'}${randomBytes(4).toString('hex')}:`,
  });
}

/** Asks for a reset link and signs up (a verification link), then waits until both mails went to the log. */
async function mailLinks(app: TestApp): Promise<{ email: string; signupEmail: string }> {
  const account = await createAccount(app);
  const client = new Client(app, { ip: randomIp() });
  expect((await client.post('/api/v1/auth/forgot-password', { email: account.email })).status).to.equal(200);
  const signup = newSignup();
  expect((await client.post('/api/v1/users/', signup)).status).to.equal(201);
  await app.services.accounts.idle();
  return { email: account.email, signupEmail: signup.email };
}

function mailLine(logs: LogLine[], to: string): LogLine & { mail: Record<string, unknown> } {
  const line = logs.find((candidate) => (candidate.mail as { to?: string } | undefined)?.to === to);
  expect(line, `a log line for the mail to ${to}`).to.not.equal(undefined);
  return line as LogLine & { mail: Record<string, unknown> };
}

describe('rule 1: without SMTP_URL, mails go to the log; their links only outside production', () => {
  it('development: the log carries each mail with its link and the api action (hack/up.sh relies on it)', async () => {
    const app = await startWithoutSmtp('development');
    try {
      const { email, signupEmail } = await mailLinks(app);
      const reset = mailLine(app.logs, email);
      expect(reset.mail).to.include({ template: 'reset' });
      expect(reset.mail.link).to.be.a('string').and.match(/\/reset-password\?token=[^&]+$/);
      expect(reset.mail.text).to.include(reset.mail.link);
      expect(reset.mail.apiAction).to.match(/^POST \/api\/v1\/auth\/reset-password/);
      const verify = mailLine(app.logs, signupEmail);
      expect(verify.mail).to.include({ template: 'verify' });
      expect(verify.mail.link).to.match(/\/verify-email\?token=[^&]+$/);
    } finally {
      await app.close();
    }
  });

  it('production: the log names recipient and template, never the link, token or text', async () => {
    const app = await startWithoutSmtp('production');
    try {
      const { email, signupEmail } = await mailLinks(app);
      for (const [to, template] of [[email, 'reset'], [signupEmail, 'verify']] as const) {
        const line = mailLine(app.logs, to);
        expect(line.mail).to.deep.equal({ to, template });
        expect(line.msg).to.include('link withheld: configure SMTP_URL');
      }
      const everything = JSON.stringify(app.logs);
      expect(everything).to.not.match(/token=|reset-password\?|verify-email\?/);
      expect(everything).to.not.include('eyJ'); // no JWT, whatever field it might hide in
    } finally {
      await app.close();
    }
  });
});
