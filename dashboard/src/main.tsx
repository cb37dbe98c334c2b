/**
 * The merchant and operator dashboard (issue 12). Every figure comes from the public API, called
 * with the session cookie (api.ts); merchant-controlled values are rendered as text nodes only.
 */
import { type RefObject, render, type VNode } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
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

/**
 * Whether the header's links must fold into a menu: they stay on one line while they fit beside
 * the merchant's name and "Sign out" — measured, so that a long name or a wide font folds them
 * rather than letting them overflow. When the width or the fonts change, the links are laid out
 * inline again and measured again (before the browser paints).
 */
function useFolded(bar: RefObject<HTMLDivElement>, nav: RefObject<HTMLElement>, key: string): boolean {
  const [folded, setFolded] = useState(false);
  const [generation, setGeneration] = useState(0);
  useLayoutEffect(() => {
    const links = nav.current;
    if (links && !folded && links.scrollWidth > links.clientWidth + 1) setFolded(true);
  }, [key, folded, generation]);
  useEffect(() => {
    const box = bar.current;
    if (!box) return;
    let width = box.clientWidth;
    let live = true;
    const measureAgain = () => {
      if (!live) return;
      setFolded(false);
      setGeneration((g) => g + 1);
    };
    const observer = new ResizeObserver(() => {
      if (box.clientWidth === width) return;
      width = box.clientWidth;
      measureAgain();
    });
    observer.observe(box);
    void document.fonts?.ready.then(measureAgain);
    return () => {
      live = false;
      observer.disconnect();
    };
  }, [key]);
  return folded;
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
  const [menuOpen, setMenuOpen] = useState(false);
  const barRef = useRef<HTMLDivElement>(null);
  const navRef = useRef<HTMLElement>(null);
  const folded = useFolded(barRef, navRef, `${session?.tier}:${session?.accountName}`);
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

  const merchantLinks: Array<[href: string, label: string, current: boolean]> = [
    ['/payments', 'Payments', path.startsWith('/payments')],
    ['/overview', 'Overview', path === '/overview'],
    ...MERCHANT_NAV.map(([href, label]): [string, string, boolean] => [href, label, navSection(path) === href]),
  ];
  const operatorLinks: Array<[href: string, label: string, current: boolean]> = [
    ['/accounts', 'Accounts', path === '/accounts'],
    ['/jobs', 'Jobs', path === '/jobs'],
    ['/payments-in-doubt', 'Payments in doubt', path === '/payments-in-doubt'],
    ['/sandbox', 'Sandbox', path === '/sandbox'],
  ];
  const who = session.tier === 'operator' ? 'Operator' : (session.accountName ?? `Merchant ${session.accountId ?? ''}`);

  return (
    <>
      <header>
        <div class={folded ? 'bar folded' : 'bar'} ref={barRef}>
          <span class="who" data-testid="who" title={session.tier === 'merchant' ? `${who} (account ${session.accountId ?? ''})` : undefined}>
            {who}
          </span>
          <button type="button" class="menu-toggle" aria-expanded={menuOpen ? 'true' : 'false'} aria-controls="main-nav" onClick={() => setMenuOpen(!menuOpen)}>
            Menu
          </button>
          <nav id="main-nav" ref={navRef} aria-label="Main" class={menuOpen ? 'open' : undefined} onClick={() => setMenuOpen(false)}>
            {(session.tier === 'merchant' ? merchantLinks : operatorLinks).map(([href, label, current]) => (
              <a href={`#${href}`} aria-current={current ? 'page' : undefined}>
                {label}
              </a>
            ))}
          </nav>
          <button
            type="button"
            class="sign-out"
            onClick={async () => {
              await signOut().catch(() => undefined);
              location.hash = '';
              setSession(null);
            }}
          >
            Sign out
          </button>
        </div>
        {session.sandbox && (
          <p class="sandbox-banner" role="note" data-testid="sandbox-banner">
            <strong>Sandbox</strong> — test mode: payments go to the simulated acquirer, test cards only, no real money moves.
          </p>
        )}
      </header>
      <main>{view}</main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
