// Signing up, verifying, signing in, and the pages the e-mailed links open (verify, reset
// password, confirm an e-mail change): each completes its action against the public api.
import { useEffect, useState } from 'preact/hooks';
import { api, post, setCsrfToken, type Login } from './api.ts';
import { linkProps, navigate } from './router.ts';
import { ErrorNote, Field } from './ui.tsx';

type Submit = (event: Event) => void;

/** A form's submit: busy while the call runs, its error kept for the page. */
function useSubmit(action: (form: FormData) => Promise<void>): { busy: boolean; error: unknown; onSubmit: Submit } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const onSubmit: Submit = (event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    action(new FormData(event.currentTarget as HTMLFormElement))
      .catch(setError)
      .finally(() => setBusy(false));
  };
  return { busy, error, onSubmit };
}

const text = (form: FormData, name: string) => String(form.get(name) ?? '');

export function SignIn({ onSignedIn }: { onSignedIn: (login: Login) => void }) {
  const submit = useSubmit(async (form) => {
    const body: Record<string, string> = { username: text(form, 'username'), password: text(form, 'password') };
    if (form.get('remember_me')) body.remember_me = 'true';
    const login = await api<Login>('POST', '/api/v1/auth/login', { form: body });
    setCsrfToken(login.csrf_token);
    onSignedIn(login);
    navigate('/', true);
  });
  return (
    <main class="auth">
      <h1>Sign in</h1>
      <form onSubmit={submit.onSubmit}>
        <Field label="Username or e-mail">
          <input name="username" autoComplete="username" required />
        </Field>
        <Field label="Password">
          <input name="password" type="password" autoComplete="current-password" required />
        </Field>
        <label class="check">
          <input name="remember_me" type="checkbox" value="true" /> Keep me signed in for 30 days
        </label>
        <button type="submit" disabled={submit.busy}>
          Sign in
        </button>
        <ErrorNote error={submit.error} />
      </form>
      <p>
        New here? <a {...linkProps('/signup')}>Create an account</a> · <a {...linkProps('/forgot-password')}>Forgot your password?</a>
      </p>
    </main>
  );
}

export function SignUp() {
  const [sentTo, setSentTo] = useState<string | null>(null);
  const submit = useSubmit(async (form) => {
    await post('/api/v1/users/', { name: text(form, 'name'), username: text(form, 'username'), email: text(form, 'email'), password: text(form, 'password') });
    setSentTo(text(form, 'email'));
  });
  if (sentTo) return <CheckEmail email={sentTo} />;
  return (
    <main class="auth">
      <h1>Create your account</h1>
      <form onSubmit={submit.onSubmit}>
        <Field label="Name">
          <input name="name" autoComplete="name" required />
        </Field>
        <Field label="Username">
          <input name="username" autoComplete="username" required />
        </Field>
        <Field label="E-mail">
          <input name="email" type="email" autoComplete="email" required />
        </Field>
        <Field label="Password">
          <input name="password" type="password" autoComplete="new-password" required minLength={8} />
        </Field>
        <button type="submit" disabled={submit.busy}>
          Sign up
        </button>
        <ErrorNote error={submit.error} />
      </form>
      <p>
        Have an account? <a {...linkProps('/signin')}>Sign in</a>
      </p>
    </main>
  );
}

function CheckEmail({ email }: { email: string }) {
  const [resent, setResent] = useState(false);
  const resend = useSubmit(async () => {
    await post('/api/v1/auth/send-verification', { email });
    setResent(true);
  });
  return (
    <main class="auth">
      <h1>Check your e-mail</h1>
      <p role="status">
        We sent a link to <strong>{email}</strong>. Open it to verify your address, then sign in.
      </p>
      <form onSubmit={resend.onSubmit}>
        <button type="submit" class="secondary" disabled={resend.busy}>
          Send the link again
        </button>
        {resent && <span> Sent.</span>}
        <ErrorNote error={resend.error} />
      </form>
    </main>
  );
}

/** A page an e-mailed link opens: the token from the link, one call, its outcome. */
function TokenPage({ title, done, run }: { title: string; done: string; run: (token: string) => Promise<void> }) {
  const token = new URLSearchParams(location.search).get('token') ?? '';
  const [state, setState] = useState<'working' | 'done' | unknown>('working');
  useEffect(() => {
    run(token).then(
      () => setState('done'),
      (error: unknown) => setState(error),
    );
  }, [token]);
  return (
    <main class="auth">
      <h1>{title}</h1>
      {state === 'working' && <p role="status">One moment…</p>}
      {state === 'done' && (
        <p role="status" class="ok">
          {done} <a {...linkProps('/signin')}>Sign in</a>
        </p>
      )}
      {state !== 'working' && state !== 'done' && <ErrorNote error={state} />}
    </main>
  );
}

export function VerifyEmail() {
  return <TokenPage title="Verify your e-mail" done="Your address is verified." run={(token) => post('/api/v1/auth/verify-email', { token })} />;
}

export function ConfirmEmailChange() {
  return <TokenPage title="Confirm your new e-mail" done="Your e-mail address is changed." run={(token) => post('/api/v1/auth/confirm-email-change', { token })} />;
}

export function ForgotPassword() {
  const [sent, setSent] = useState(false);
  const submit = useSubmit(async (form) => {
    await post('/api/v1/auth/forgot-password', { email: text(form, 'email') });
    setSent(true);
  });
  return (
    <main class="auth">
      <h1>Reset your password</h1>
      {sent ? (
        <p role="status">If the address has an account, a reset link is on its way (valid for one hour).</p>
      ) : (
        <form onSubmit={submit.onSubmit}>
          <Field label="E-mail">
            <input name="email" type="email" autoComplete="email" required />
          </Field>
          <button type="submit" disabled={submit.busy}>
            Send the link
          </button>
          <ErrorNote error={submit.error} />
        </form>
      )}
    </main>
  );
}

export function ResetPassword() {
  const token = new URLSearchParams(location.search).get('token') ?? '';
  const [done, setDone] = useState(false);
  const submit = useSubmit(async (form) => {
    await post('/api/v1/auth/reset-password', { token, new_password: text(form, 'new_password') });
    setDone(true);
  });
  return (
    <main class="auth">
      <h1>Choose a new password</h1>
      {done ? (
        <p role="status" class="ok">
          Your password is changed and every session ended. <a {...linkProps('/signin')}>Sign in</a>
        </p>
      ) : (
        <form onSubmit={submit.onSubmit}>
          <Field label="New password">
            <input name="new_password" type="password" autoComplete="new-password" required minLength={8} />
          </Field>
          <button type="submit" disabled={submit.busy}>
            Set the password
          </button>
          <ErrorNote error={submit.error} />
        </form>
      )}
    </main>
  );
}
