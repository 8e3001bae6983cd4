import { z } from 'zod';
import { BillingStatusSchema } from '../billing/schemas.ts';

export const UserRead = z
  .object({
    id: z.uuid(),
    name: z.string(),
    username: z.string(),
    email: z.string(),
    email_verified: z.boolean(),
    locale: z.string(),
    is_superuser: z.boolean(),
    storage_used_bytes: z.int(),
    has_password: z.boolean().describe('False for identity-provider accounts without a password.'),
    created_at: z.iso.datetime(),
  })
  .meta({ id: 'User' });

const SessionRead = z
  .object({ created_at: z.iso.datetime(), expires_at: z.iso.datetime(), remember_me: z.boolean() })
  .meta({ id: 'Session' });

export const LoginResult = z
  .object({ csrf_token: z.string(), user: UserRead, billing: BillingStatusSchema })
  .meta({ id: 'LoginResult' });

export const CheckAuthResult = z
  .union([
    z.object({
      authenticated: z.literal(true),
      user: UserRead,
      session: SessionRead,
      oauth_providers: z.array(z.string()),
      csrf_token: z.string(),
      billing: BillingStatusSchema,
    }),
    z.object({ authenticated: z.literal(false), message: z.string(), oauth_providers: z.array(z.string()) }),
  ])
  .meta({ id: 'CheckAuthResult' });

export const Detail = z.object({ detail: z.string() }).meta({ id: 'Detail' });

/** Addresses are compared and stored lower-cased. */
export const Email = z.string().trim().toLowerCase().pipe(z.email().max(320));

/** bcrypt reads at most 72 bytes, so longer passwords are refused rather than cut. */
export const Password = z
  .string()
  .min(8)
  .max(72)
  .refine((value) => Buffer.byteLength(value) <= 72);

export const Username = z.string().trim().regex(/^[A-Za-z0-9_.-]{3,40}$/);
export const Name = z.string().trim().min(1).max(100);
export const Token = z.string().min(1).max(4096);
