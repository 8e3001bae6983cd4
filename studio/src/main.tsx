// The studio: a creator's review-and-finish editor on Cutroom's public API, served by the api at /studio/.
import './studio.css';
import { render } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { get, post, setCsrfToken, type Billing, type CheckAuth, type User } from './api.ts';
import { ConfirmEmailChange, ForgotPassword, ResetPassword, SignIn, SignUp, VerifyEmail } from './auth.tsx';
import { ProjectPage } from './project.tsx';
import { Projects } from './projects.tsx';
import { linkProps, navigate, useRoute } from './router.ts';

export interface Session {
  user: User;
  billing: Billing;
  /** Reads billing again (after an analysis or an export settled credits). */
  refreshBilling(): void;
}

/** Pages that work without a session: the e-mailed links among them. */
const PUBLIC_PAGES: Record<string, () => preact.JSX.Element> = {
  '/signup': () => <SignUp />,
  '/verify-email': () => <VerifyEmail />,
  '/reset-password': () => <ResetPassword />,
  '/forgot-password': () => <ForgotPassword />,
  '/confirm-email-change': () => <ConfirmEmailChange />,
};

function App() {
  const { path } = useRoute();
  const [auth, setAuth] = useState<{ user: User; billing: Billing } | null | undefined>(undefined);

  const checkAuth = useCallback(async () => {
    const answer = await get<CheckAuth>('/api/v1/auth/check-auth');
    if (answer.authenticated) {
      setCsrfToken(answer.csrf_token);
      setAuth({ user: answer.user, billing: answer.billing });
    } else {
      setCsrfToken(null);
      setAuth(null);
    }
  }, []);
  useEffect(() => void checkAuth().catch(() => setAuth(null)), [checkAuth]);

  const refreshBilling = useCallback(() => {
    get<Billing>('/api/v1/users/me/billing').then(
      (billing) => setAuth((current) => (current ? { ...current, billing } : current)),
      () => undefined,
    );
  }, []);

  const publicPage = PUBLIC_PAGES[path];
  if (publicPage) return publicPage();
  if (auth === undefined) return <p role="status">Loading…</p>;
  if (auth === null || path === '/signin') return <SignIn onSignedIn={(login) => setAuth({ user: login.user, billing: login.billing })} />;

  const session: Session = { ...auth, refreshBilling };
  const signOut = async () => {
    await post('/api/v1/auth/logout').catch(() => undefined);
    setCsrfToken(null);
    setAuth(null);
    navigate('/signin');
  };
  const project = /^\/projects\/([0-9a-f-]{36})$/.exec(path)?.[1];
  return (
    <>
      <header class="top">
        <a class="brand" {...linkProps('/')}>
          Cutroom studio
        </a>
        <BillingBadge billing={auth.billing} onTrial={refreshBilling} />
        <span class="who">{auth.user.username}</span>
        <button class="secondary" onClick={() => void signOut()}>
          Sign out
        </button>
      </header>
      {project ? <ProjectPage id={project} session={session} /> : <Projects session={session} />}
    </>
  );
}

/** The tier and the AI minutes left: what gates analysis, visible before the creator asks. */
function BillingBadge({ billing, onTrial }: { billing: Billing; onTrial: () => void }) {
  const minutes = billing.credits.ai_minutes;
  const [error, setError] = useState<string | null>(null);
  const startTrial = () =>
    post('/api/v1/users/me/activate-trial').then(onTrial, (caught: unknown) => setError(caught instanceof Error ? caught.message : String(caught)));
  return (
    <span class="billing" data-testid="billing">
      <span>{billing.tier}</span>
      <span>
        {(minutes.balance - minutes.reserved).toFixed(1)} AI min left
      </span>
      {!billing.trial_used && (
        <button class="secondary" onClick={() => void startTrial()}>
          Start 7-day trial
        </button>
      )}
      {error && <span class="error">{error}</span>}
    </span>
  );
}

render(<App />, document.getElementById('app')!);
