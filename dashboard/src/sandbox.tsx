import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError, api } from './api';
import { when } from './format';
import { ListTable } from './ui';

const SANDBOX = '/sandbox/v1';

interface Transfer {
  id: string;
  settlementName: string;
  postingDate: string;
  netAmount: string;
  currency: string;
}

/** The steps forward offered for the clock: renewals, expiries and settlement runs are days apart. */
const STEPS: Array<[string, number]> = [
  ['1 hour', 3600],
  ['1 day', 86_400],
  ['7 days', 7 * 86_400],
  ['30 days', 30 * 86_400],
];

/** Operator, sandbox only: the service clock (read, move forward) and a settlement run. */
export function Sandbox() {
  return (
    <section aria-labelledby="sandbox-title">
      <h1 id="sandbox-title">Sandbox</h1>
      <Clock />
      <SettlementRun />
    </section>
  );
}

function Clock() {
  const [now, setNow] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [off, setOff] = useState(false);
  const [step, setStep] = useState(String(STEPS[1]![1]));
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<string | null>(null);

  const load = useCallback(async () => {
    try {
      setNow((await api.getRoot<{ now: string }>(`${SANDBOX}/clock`)).now);
      setError(null);
    } catch (e) {
      // The sandbox routes exist only with PAYMENTS_SANDBOX=1.
      if (e instanceof ApiError && e.status === 404) setOff(true);
      else setError((e as Error).message);
    }
  }, []);
  useEffect(() => {
    void load();
  }, [load]);

  if (off) return <p class="empty">The sandbox is off in this deployment (PAYMENTS_SANDBOX=0): no clock or settlement controls.</p>;
  return (
    <div aria-labelledby="clock-title">
      <h2 id="clock-title">Service clock</h2>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {!now && !error && <p aria-busy="true">Loading…</p>}
      {now && (
        <p>
          Service time: <strong data-testid="service-time">{when(now)}</strong>
        </p>
      )}
      <form
        class="filters"
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          setMessage(null);
          try {
            const moved = await api.postRoot<{ now: string }>(`${SANDBOX}/clock`, { advanceSeconds: Number(step) });
            setNow(moved.now);
            setError(null);
            setMessage(`Clock moved to ${when(moved.now)}. Jobs due by then run now.`);
          } catch (err) {
            setError((err as Error).message);
          } finally {
            setBusy(false);
          }
        }}
      >
        <label>
          Move forward by
          <select value={step} onChange={(e) => setStep((e.currentTarget as HTMLSelectElement).value)}>
            {STEPS.map(([label, seconds]) => (
              <option key={seconds} value={String(seconds)}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" disabled={busy || !now}>
          Move clock
        </button>
        <button type="button" onClick={() => void load()}>
          Refresh
        </button>
      </form>
      {message && <p role="status">{message}</p>}
    </div>
  );
}

function SettlementRun() {
  const [state, setState] = useState<'idle' | 'running' | 'done'>('idle');
  const [started, setStarted] = useState(0);
  const [elapsed, setElapsed] = useState(0);
  const [transfers, setTransfers] = useState<Transfer[]>([]);
  const [error, setError] = useState<string | null>(null);

  // The run is one request: while it is out, the elapsed time shows that it is still going.
  useEffect(() => {
    if (state !== 'running') return undefined;
    const timer = setInterval(() => setElapsed(Date.now() - started), 250);
    return () => clearInterval(timer);
  }, [state, started]);

  const run = async () => {
    setStarted(Date.now());
    setElapsed(0);
    setState('running');
    setError(null);
    try {
      const result = await api.postRoot<{ settlementTransfers: Array<{ settlementTransfer: Transfer }> }>(`${SANDBOX}/settlements/run`, {});
      setTransfers(result.settlementTransfers.map((t) => t.settlementTransfer));
      setState('done');
    } catch (e) {
      setError((e as Error).message);
      setState('idle');
    }
  };

  return (
    <div>
      <h2>Settlement run</h2>
      <p>Settles every capture, sale, refund and payout not yet settled: one transfer per merchant and currency.</p>
      <button type="button" disabled={state === 'running'} onClick={() => void run()}>
        Run settlement
      </button>
      {state === 'running' && (
        <p role="status" aria-busy="true">
          <progress aria-label="Settlement run in progress" /> Settling… {(elapsed / 1000).toFixed(1)} s
        </p>
      )}
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {state === 'done' && transfers.length === 0 && (
        <p role="status" class="empty">
          Settlement run done: nothing was waiting to be settled.
        </p>
      )}
      {state === 'done' && transfers.length > 0 && (
        <>
          <p role="status">
            Settlement run done: {transfers.length} transfer{transfers.length === 1 ? '' : 's'}.
          </p>
          <ListTable columns={['Transfer', 'Settlement', 'Posting date', ['Net amount', 'num']]}>
            {transfers.map((t) => (
              <tr key={t.id}>
                <td class="reference">{t.id}</td>
                <td>{t.settlementName}</td>
                <td>{t.postingDate}</td>
                <td class="num">
                  {t.netAmount} {t.currency}
                </td>
              </tr>
            ))}
          </ListTable>
        </>
      )}
    </div>
  );
}
