import type { AppContext } from '../http/state.ts';

export interface CookieOptions {
  /** Seconds; 0 removes the cookie. */
  maxAge: number;
  /** Hidden from scripts (the session); the CSRF cookie must stay readable. */
  httpOnly: boolean;
  /** Sent only over HTTPS: set when the public address is https, whatever the hop to the api. */
  secure: boolean;
  path?: string;
}

/**
 * Writes a SameSite=Lax cookie. Written by hand because Koa refuses Secure cookies on a
 * plain connection, which is what the api sees behind a TLS-terminating ingress.
 */
export function writeCookie(ctx: AppContext, name: string, value: string, options: CookieOptions): void {
  const parts = [`${name}=${value}`, `Path=${options.path ?? '/'}`, `Max-Age=${options.maxAge}`, 'SameSite=Lax'];
  if (options.maxAge === 0) parts.push('Expires=Thu, 01 Jan 1970 00:00:00 GMT');
  if (options.httpOnly) parts.push('HttpOnly');
  if (options.secure) parts.push('Secure');
  ctx.append('Set-Cookie', parts.join('; '));
}
