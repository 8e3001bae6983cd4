import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from 'pino';

/** One e-mail, already written in its recipient's language. */
export interface Mail {
  to: string;
  subject: string;
  text: string;
  /** The link the mail carries, if any (also written to the log by LogMailer). */
  link?: string;
  /** What the front end behind `link` does with it, for people trying the api without one. */
  apiAction?: string;
}

export interface Mailer {
  send(mail: Mail): Promise<void>;
  close(): void;
}

/** Delivers over SMTP (SMTP_URL), with timeouts so a slow server cannot hold a request. */
export class SmtpMailer implements Mailer {
  readonly #transport: Transporter;
  readonly #from: string;

  constructor(smtpUrl: string, from: string) {
    const url = new URL(smtpUrl);
    this.#transport = nodemailer.createTransport({
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
    this.#from = from;
  }

  async send(mail: Mail): Promise<void> {
    await this.#transport.sendMail({ from: this.#from, to: mail.to, subject: mail.subject, text: mail.text });
  }

  close(): void {
    this.#transport.close();
  }
}

/** Without SMTP_URL (the local default) every mail goes to the JSON log, links included. */
export class LogMailer implements Mailer {
  readonly #logger: Logger;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  async send(mail: Mail): Promise<void> {
    this.#logger.info({ mail }, `mail to ${mail.to} (not sent: SMTP_URL is unset)`);
  }

  close(): void {}
}

export function createMailer(config: { SMTP_URL?: string | undefined; MAIL_FROM: string }, logger: Logger): Mailer {
  return config.SMTP_URL ? new SmtpMailer(config.SMTP_URL, config.MAIL_FROM) : new LogMailer(logger);
}
