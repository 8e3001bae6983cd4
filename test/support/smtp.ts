import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** One message as the sink received it, decoded. */
export interface ReceivedMail {
  from: string;
  to: string[];
  subject: string;
  text: string;
  /** Every http(s) address in the text, in order. */
  links: string[];
}

/**
 * A real SMTP server on loopback that keeps what it receives: the api talks to it
 * through nodemailer exactly as to a production relay (SMTP_URL).
 */
export class SmtpSink {
  readonly messages: ReceivedMail[] = [];
  readonly #server: SMTPServer;
  readonly #waiters = new Set<() => void>();
  #port = 0;

  private constructor() {
    this.#server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['AUTH', 'STARTTLS'],
      logger: false,
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          const envelope = session.envelope;
          this.messages.push(parseMessage(Buffer.concat(chunks).toString('utf8'), envelope.mailFrom ? envelope.mailFrom.address : '', envelope.rcptTo.map((r) => r.address)));
          for (const wake of this.#waiters) wake();
          callback();
        });
      },
    });
  }

  static async start(): Promise<SmtpSink> {
    const sink = new SmtpSink();
    await new Promise<void>((resolve) => {
      const server = sink.#server.listen(0, '127.0.0.1', () => {
        sink.#port = (server.address() as AddressInfo).port;
        resolve();
      });
    });
    return sink;
  }

  /** The SMTP_URL that points the api at this sink. */
  get url(): string {
    return `smtp://127.0.0.1:${this.#port}`;
  }

  /**
   * The first message (already received or still to come) matching `match`; `since`
   * (a count of messages, e.g. `sink.messages.length` taken earlier) skips older ones.
   */
  async waitFor(match: { to: string; subject?: RegExp; since?: number }, timeoutMs = 5000): Promise<ReceivedMail> {
    const find = () =>
      this.messages
        .slice(match.since ?? 0)
        .find((m) => m.to.includes(match.to.toLowerCase()) && (!match.subject || match.subject.test(m.subject)));
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = find();
      if (found) return found;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no mail to ${match.to}${match.subject ? ` matching ${match.subject}` : ''} within ${timeoutMs} ms (got: ${this.messages.map((m) => `${m.to.join(',')}: ${m.subject}`).join('; ') || 'none'})`);
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.#waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, left);
        this.#waiters.add(wake);
      });
    }
  }

  /** Every message to an address, in arrival order. */
  to(address: string): ReceivedMail[] {
    return this.messages.filter((m) => m.to.includes(address.toLowerCase()));
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

/** Enough MIME for the single-part text mails the api sends: headers, transfer encodings, encoded-word subjects. */
function parseMessage(raw: string, from: string, to: string[]): ReceivedMail {
  const split = raw.indexOf('\r\n\r\n');
  const head = split < 0 ? raw : raw.slice(0, split);
  const body = split < 0 ? '' : raw.slice(split + 4);
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  const encoding = (headers.get('content-transfer-encoding') ?? '7bit').toLowerCase();
  const text =
    encoding === 'quoted-printable'
      ? decodeQuotedPrintable(body)
      : encoding === 'base64'
        ? Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8')
        : body;
  const normalized = text.replace(/\r\n/g, '\n');
  return {
    from,
    to: to.map((address) => address.toLowerCase()),
    subject: decodeEncodedWords(headers.get('subject') ?? ''),
    text: normalized,
    links: [...normalized.matchAll(/https?:\/\/[^\s]+/g)].map((m) => m[0]),
  };
}

function decodeQuotedPrintable(value: string): string {
  const bytes: number[] = [];
  const softBreaksRemoved = value.replace(/=\r?\n/g, '');
  for (let i = 0; i < softBreaksRemoved.length; i++) {
    const char = softBreaksRemoved[i]!;
    const hex = softBreaksRemoved.slice(i + 1, i + 3);
    if (char === '=' && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(char, 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

function decodeEncodedWords(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?([^?]+)\?([QqBb])\?([^?]*)\?=/g, (_whole, _charset: string, kind: string, data: string) =>
      kind.toUpperCase() === 'B'
        ? Buffer.from(data, 'base64').toString('utf8')
        : decodeQuotedPrintable(data.replace(/_/g, ' ')),
    );
}
