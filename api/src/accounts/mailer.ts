import type { Transporter } from 'nodemailer';
import type { Logger } from 'pino';

/** One e-mail, already written in its recipient's language. */
export interface Mail {
  to: string;
  /** Which mail this is (`verify`, `reset`…): what a log may show instead of the contents. */
  template: string;
  subject: string;
  text: string;
  /** The link the mail carries, if any (also written to the log by LogMailer outside production). */
  link?: string;
  /** What the front end behind `link` does with it, for people trying the api without one. */
  apiAction?: string;
}

export interface Mailer {
  send(mail: Mail): Promise<void>;
  close(): void;
}

/**
 * Delivers over SMTP (SMTP_URL), with timeouts so a slow server cannot hold a request.
 * nodemailer is loaded with the first mail, not at start-up.
 */
class SmtpMailer implements Mailer {
  readonly #url: URL;
  readonly #from: string;
  #transport: Promise<Transporter> | undefined;

  constructor(smtpUrl: string, from: string) {
    this.#url = new URL(smtpUrl);
    this.#from = from;
  }

  async send(mail: Mail): Promise<void> {
    this.#transport ??= this.#connect();
    await (await this.#transport).sendMail({ from: this.#from, to: mail.to, subject: mail.subject, text: mail.text });
  }

  close(): void {
    void this.#transport?.then((transport) => transport.close(), () => {});
  }

  async #connect(): Promise<Transporter> {
    const { default: nodemailer } = await import('nodemailer');
    const url = this.#url;
    return nodemailer.createTransport({
      host: url.hostname,
      port: Number(url.port || (url.protocol === 'smtps:' ? 465 : 587)),
      secure: url.protocol === 'smtps:',
      auth: url.username ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } : undefined,
      // Loopback sinks and in-cluster relays rarely carry certificates for their address.
      ignoreTLS: url.searchParams.get('ignoreTLS') === 'true',
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 20_000,
    });
  }
}

/**
 * Without SMTP_URL every mail goes to the JSON log. In development (hack/up.sh) that
 * includes its text and link; with `withholdContents` (production) only the recipient
 * and template, because a reset or verification link is a credential.
 */
class LogMailer implements Mailer {
  readonly #logger: Logger;
  readonly #withholdContents: boolean;

  constructor(logger: Logger, options: { withholdContents?: boolean } = {}) {
    this.#logger = logger;
    this.#withholdContents = options.withholdContents ?? false;
  }

  async send(mail: Mail): Promise<void> {
    if (this.#withholdContents) {
      this.#logger.warn({ mail: { to: mail.to, template: mail.template } }, `mail to ${mail.to} not sent (SMTP_URL is unset); link withheld: configure SMTP_URL`);
      return;
    }
    this.#logger.info({ mail }, `mail to ${mail.to} (not sent: SMTP_URL is unset)`);
  }

  close(): void {}
}

export function createMailer(config: { SMTP_URL?: string | undefined; MAIL_FROM: string; NODE_ENV: string }, logger: Logger): Mailer {
  if (config.SMTP_URL) return new SmtpMailer(config.SMTP_URL, config.MAIL_FROM);
  const production = config.NODE_ENV === 'production';
  if (production) logger.warn('SMTP_URL is unset: mails are not delivered and their links are not logged');
  return new LogMailer(logger, { withholdContents: production });
}
