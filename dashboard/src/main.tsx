/**
 * The merchant and operator dashboard (issue 12). Every figure comes from the public API, called
 * with the session cookie (api.ts); merchant-controlled values are rendered as text nodes only.
 */
import { render, type VNode } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { currentSession, signOut, type Session } from './api';
import { SignIn } from './sign-in';
import { Payments } from './payments';
import { PaymentDetail } from './payment-detail';
import { MERCHANT_NAV, merchantView, navSection } from './merchant-routes';
import { Overview } from './overview';
import { Accounts } from './accounts';
import { Jobs } from './jobs';
import { PaymentsInDoubt } from './payments-in-doubt';
import { Sandbox } from './sandbox';
import './styles.css';

function useHash(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const on = () => setHash(location.hash);
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return hash;
}

/** The operator's views besides accounts (the default), by hash path. */
const OPERATOR_VIEWS: Record<string, () => VNode> = {
  '/jobs': () => <Jobs />,
  '/payments-in-doubt': () => <PaymentsInDoubt />,
  '/sandbox': () => <Sandbox />,
};

function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const hash = useHash();
  useEffect(() => {
    currentSession().then(setSession, (e: Error) => setError(e.message));
  }, []);

  if (error) return <p role="alert">{error}</p>;
  if (session === undefined) return <p aria-busy="true">Loading…</p>;
  if (session === null) return <SignIn onSignedIn={setSession} />;

  const path = hash.replace(/^#/, '') || (session.tier === 'operator' ? '/accounts' : '/payments');
  const detail = /^\/payments\/([^/]+)$/.exec(path);
  let view;
  if (session.tier === 'operator') view = OPERATOR_VIEWS[path]?.() ?? <Accounts />;
  else if (detail) view = <PaymentDetail id={decodeURIComponent(detail[1]!)} />;
  else if (path === '/overview') view = <Overview />;
  else view = merchantView(path) ?? <Payments />;

  return (
    <>
      <header>
        <nav aria-label="Main">
          <strong>Payments dashboard</strong>
          {session.tier === 'merchant' ? (
            <>
              <a href="#/payments" aria-current={path.startsWith('/payments') ? 'page' : undefined}>
                Payments
              </a>
              <a href="#/overview" aria-current={path === '/overview' ? 'page' : undefined}>
                Overview
              </a>
              {MERCHANT_NAV.map(([href, label]) => (
                <a href={`#${href}`} aria-current={navSection(path) === href ? 'page' : undefined}>
                  {label}
                </a>
              ))}
            </>
          ) : (
            <>
              <a href="#/accounts" aria-current={path === '/accounts' ? 'page' : undefined}>
                Accounts
              </a>
              <a href="#/jobs" aria-current={path === '/jobs' ? 'page' : undefined}>
                Jobs
              </a>
              <a href="#/payments-in-doubt" aria-current={path === '/payments-in-doubt' ? 'page' : undefined}>
                Payments in doubt
              </a>
              <a href="#/sandbox" aria-current={path === '/sandbox' ? 'page' : undefined}>
                Sandbox
              </a>
            </>
          )}
          <span class="who">{session.tier === 'operator' ? 'Operator' : `Merchant ${session.accountId ?? ''}`}</span>
          <button
            type="button"
            onClick={async () => {
              await signOut().catch(() => undefined);
              location.hash = '';
              setSession(null);
            }}
          >
            Sign out
          </button>
        </nav>
      </header>
      <main>{view}</main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
