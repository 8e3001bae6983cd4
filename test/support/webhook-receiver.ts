import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from './wait.ts';

/** One request a receiver got, as it arrived. */
export interface ReceivedWebhook {
  /** The request's path. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/**
 * How the receiver answers a request: a status, a redirect, or never; `delayMs` answers
 * that much later, `endlessBody` sends a body that never ends (until the client goes).
 */
export type Answer = { status: number; location?: string; delayMs?: number; endlessBody?: boolean } | 'hang';

/**
 * A real HTTP server on loopback that keeps every request it gets and answers as the test
 * says (by default 200). A receiver that hangs keeps the connection open without answering.
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  /** Bytes of response bodies written so far, and how many of those responses the client closed. */
  bodyBytesSent = 0;
  bodiesClosed = 0;
  answer: (request: ReceivedWebhook, index: number) => Answer = () => ({ status: 200 });
  readonly #server: Server;
  readonly #hanging = new Set<ServerResponse>();

  private constructor() {
    this.#server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const got = { url: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
        this.received.push(got);
        const answer = this.answer(got, this.received.length - 1);
        if (answer === 'hang') {
          this.#hanging.add(response);
          response.on('close', () => this.#hanging.delete(response));
          return;
        }
        this.#hanging.add(response);
        response.on('close', () => this.#hanging.delete(response));
        setTimeout(() => this.#respond(response, answer), answer.delayMs ?? 0);
      });
    });
  }

  #respond(response: ServerResponse, answer: Exclude<Answer, 'hang'>): void {
    if (response.destroyed) return;
    response.writeHead(answer.status, answer.location ? { location: answer.location } : {});
    if (!answer.endlessBody) {
      response.end('ok');
      return;
    }
    const chunk = Buffer.alloc(64 * 1024, 'x');
    const pump = () => {
      while (!response.destroyed && response.write(chunk)) this.bodyBytesSent += chunk.length;
      if (!response.destroyed) {
        this.bodyBytesSent += chunk.length;
        response.once('drain', pump);
      }
    };
    response.on('close', () => this.bodiesClosed++);
    pump();
  }

  static async start(): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver();
    await new Promise<void>((resolve) => receiver.#server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  /** Its address on loopback, or under `host` (a name the test's resolver maps to loopback). */
  url(host = '127.0.0.1'): string {
    return `http://${host}:${this.port}/hooks`;
  }

  /** Resolves once `count` requests have arrived (bounded wait). */
  async waitFor(count: number, timeoutMs = 10_000): Promise<ReceivedWebhook[]> {
    return eventually(async () => (this.received.length >= count ? this.received : undefined), () => `${count} webhook requests (got ${this.received.length})`, timeoutMs, 10);
  }

  async close(): Promise<void> {
    for (const response of this.#hanging) response.destroy();
    this.#server.closeAllConnections();
    await new Promise((resolve) => this.#server.close(resolve));
  }
}

/** The receivers one suite starts, closed together in its `after`. */
export function suiteReceivers(): { start(): Promise<WebhookReceiver>; closeAll(): Promise<void> } {
  const started: WebhookReceiver[] = [];
  return {
    async start() {
      const receiver = await WebhookReceiver.start();
      started.push(receiver);
      return receiver;
    },
    closeAll: async () => {
      await Promise.all(started.map((receiver) => receiver.close()));
    },
  };
}
