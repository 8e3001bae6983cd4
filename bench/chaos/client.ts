/**
 * A persistent client of an api that keeps dying: it holds the session and CSRF cookies
 * (sessions live in Redis and survive the api), and sends a request again while the api is
 * unreachable or answers 5xx, as a front end retrying would. Whether a request that died
 * with the api was applied is unknown to the client; the campaign's checks read the
 * database, never the client's view.
 */
export interface Answer {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

const ATTEMPT_TIMEOUT_MS = 20_000;
const RETRY_PAUSE_MS = 150;

export class ChaosClient {
  readonly #baseUrl: () => string;
  readonly #cookies = new Map<string, string>();
  /** Answers ≥ 500 seen (each retried): a server error is a finding even when a retry got through. */
  serverErrors: string[] = [];
  /** Requests sent again because the api was unreachable. */
  retries = 0;

  constructor(baseUrl: () => string) {
    this.#baseUrl = baseUrl;
  }

  async logIn(username: string, password: string, deadlineMs = 60_000): Promise<void> {
    const answer = await this.send('POST', '/api/v1/auth/login', { form: { username, password } }, deadlineMs);
    if (answer.status !== 200) throw new Error(`login of ${username}: ${answer.status} ${JSON.stringify(answer.body)}`);
  }

  /** Sends until an answer below 500 comes, or the deadline passes (then throws). */
  async send(method: string, path: string, payload: { json?: unknown; form?: Record<string, string> } = {}, deadlineMs = 90_000): Promise<Answer> {
    const deadline = Date.now() + deadlineMs;
    for (;;) {
      try {
        const answer = await this.#once(method, path, payload);
        if (answer.status < 500) return answer;
        this.serverErrors.push(`${method} ${path} → ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`);
      } catch {
        // unreachable, reset mid-answer or timed out: the api is down or restarting
      }
      if (Date.now() > deadline) throw new Error(`${method} ${path}: no answer below 500 within ${deadlineMs} ms`);
      this.retries += 1;
      await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS));
    }
  }

  async #once(method: string, path: string, payload: { json?: unknown; form?: Record<string, string> }): Promise<Answer> {
    const headers: Record<string, string> = {};
    if (this.#cookies.size) headers.Cookie = [...this.#cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const csrf = this.#cookies.get('csrf_token');
    if (method !== 'GET' && csrf) headers['X-CSRF-Token'] = csrf;
    let body: string | undefined;
    if (payload.json !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(payload.json);
    } else if (payload.form) {
      headers['Content-Type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(payload.form).toString();
    }
    const response = await fetch(`${this.#baseUrl()}${path}`, { method, headers, redirect: 'manual', signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS), ...(body !== undefined ? { body } : {}) });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      const value = pair.slice(eq + 1).trim();
      if (value) this.#cookies.set(pair.slice(0, eq).trim(), value);
      else this.#cookies.delete(pair.slice(0, eq).trim());
    }
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // not JSON: kept as text
    }
    return { status: response.status, body: parsed };
  }
}
