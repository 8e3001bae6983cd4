import { createHmac, randomBytes } from 'node:crypto';

/** Standard Webhooks secrets: `whsec_` and the base64 of the key (32 random bytes; the spec allows 24 to 64). */
const SECRET_PREFIX = 'whsec_';

export function newSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/** A new message id (`webhook-id`): unique per event, the same for each of its attempts. */
export function newMessageId(): string {
  return `msg_${randomBytes(16).toString('hex')}`;
}

/**
 * The Standard Webhooks headers of one attempt: `webhook-signature` is `v1,` and the
 * base64 HMAC-SHA256 of `id.timestamp.body` under each secret given (old and new
 * during a rotation), space-separated.
 */
export function signedHeaders(messageId: string, timestampSeconds: number, body: string, secrets: readonly string[]): Record<string, string> {
  const signed = `${messageId}.${timestampSeconds}.${body}`;
  const signatures = secrets.map((secret) => {
    const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
    return `v1,${createHmac('sha256', key).update(signed).digest('base64')}`;
  });
  return { 'webhook-id': messageId, 'webhook-timestamp': String(timestampSeconds), 'webhook-signature': signatures.join(' ') };
}
