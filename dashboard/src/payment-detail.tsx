import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, ApiError, newIdempotencyKey } from './api';
import { amountHint, inMajorUnits, major, money, parseAmount, plural, when } from './format';
import { actionLimits, type ActionLimits, inFlightOf, paymentStatus, type PaymentStatus } from './payment-status';
import type { Aggregates, ExternalStatusCodes, Operation, TimelineEntry, Transaction } from './types';
import { errorText, StatusBadge } from './ui';

interface Detail {
  transaction: Transaction;
  aggregates: Aggregates;
  operations: Operation[];
}

interface Notification {
  id: string;
  event: string;
  url: string;
  state: string;
  attemptCount: number;
  lastStatus: number | null;
}

type Action = 'capture' | 'refund' | 'void' | 'renew';
const ACTIONS: Array<[Action, string]> = [
  ['capture', 'Capture'],
  ['refund', 'Refund'],
  ['void', 'Void'],
  ['renew', 'Renew'],
];
const LABEL: Record<Action, string> = { capture: 'Capture', refund: 'Refund', void: 'Void', renew: 'Renew' };
/** What the most an action may take is, in words. */
const LIMIT_OF: Record<Exclude<Action, 'renew'>, string> = {
  capture: 'the authorization not yet captured or voided',
  refund: 'the captured amount not yet refunded',
  void: 'the authorization not yet captured or voided',
};

/** The actions a payment allows now, in the order of the menu. */
const offered = (limits: ActionLimits): Action[] => ACTIONS.map(([a]) => a).filter((a) => (a === 'renew' ? limits.renew : limits[a] > 0));

/** Why nothing can be done, by status (shown instead of an empty form). */
function nothingToDo(status: PaymentStatus, tx: Transaction): string {
  if (tx.type === 'PAYOUT') return 'A payout has no follow-up operations.';
  if (tx.terminalId) return 'A terminal sale is captured at the terminal; it is refunded with a PAYOUT sale on the terminal.';
  switch (status.key) {
    case 'PENDING':
    case 'PROCESSING':
      return 'Nothing can be done until the payment is authorized.';
    case 'FAILED':
      return 'The payment failed: there is nothing to capture, refund or void.';
    case 'REFUNDED':
      return 'Refunded in full: nothing is left to capture or refund.';
    case 'VOIDED':
      return 'The authorization was voided: nothing is left to capture or refund.';
    default:
      return status.note
        ? `Nothing more can be done while the ${status.note.replace(/ in progress/g, '')} is in progress.`
        : 'Nothing is left to capture, refund or void.';
  }
}

const codes = (c: ExternalStatusCodes | null): string =>
  c
    ? Object.entries(c)
        .filter(([, v]) => v !== null)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')
    : '';

/** The 3-D Secure steps of the payment window, in words. */
const THREE_DS_STEPS: Record<string, string> = {
  PREAUTH: 'card range looked up',
  METHOD: '3DS Method',
  ARES: 'authentication answer (ARes)',
  CHALLENGE: 'challenge shown',
  RREQ: 'challenge result (RReq)',
  DECISION: 'decision',
};

/** One timeline entry as a sentence of text (never markup). */
export function describe(e: TimelineEntry): string {
  const amount = e.amount !== null ? money(e.amount, e.currency) : '';
  switch (e.kind) {
    case 'THREE_DS_STEP':
      return [`3-D Secure ${THREE_DS_STEPS[e.event ?? ''] ?? e.event}`, e.state && `: ${e.state}`, e.excerpt && ` — ${e.excerpt}`].filter(Boolean).join('');
    case 'TRANSACTION_CREATED':
      return `Created for ${amount}`;
    case 'STATE_CHANGED':
      return [`Became ${e.state}`, e.errorCode, codes(e.externalStatusCodes) && `(codes: ${codes(e.externalStatusCodes)})`].filter(Boolean).join(' ');
    case 'OPERATION_STARTED':
      return `${e.operationType} of ${amount} started`;
    case 'OPERATION_FINISHED':
      return [
        `${e.operationType} of ${amount}: ${e.state}`,
        e.errorCode,
        codes(e.externalStatusCodes) && `(acquirer answer: ${codes(e.externalStatusCodes)})`,
        e.acquirerReference && `ref ${e.acquirerReference}`,
      ]
        .filter(Boolean)
        .join(' ');
    case 'EVENT':
      return `Event ${e.event}`;
    case 'CALLBACK_QUEUED':
      return `Callback (${e.event}) to ${e.url}: ${e.state}`;
    case 'CALLBACK_ATTEMPT':
      return `Callback attempt ${e.attempt} to ${e.url}: ${e.statusCode ?? 'no answer'} in ${e.durationMs} ms${e.excerpt ? ` — ${e.excerpt}` : ''}`;
    case 'WEBHOOK_DELIVERY_QUEUED':
      return `Webhook delivery of ${e.event}: ${e.state}`;
    case 'WEBHOOK_DELIVERY_ATTEMPT':
      return `Webhook attempt ${e.attempt} (${e.event}): ${e.statusCode ?? 'no answer'} in ${e.durationMs} ms${e.excerpt ? ` — ${e.excerpt}` : ''}`;
    default:
      return e.kind;
  }
}

export function PaymentDetail({ id }: { id: string }) {
  const [detail, setDetail] = useState<Detail | null>(null);
  const [timeline, setTimeline] = useState<TimelineEntry[] | null>(null);
  const [notifications, setNotifications] = useState<Notification[]>([]);
  const [status, setStatus] = useState<'loading' | 'ready' | 'missing' | 'error'>('loading');
  const [error, setError] = useState<string | null>(null);

  const load = useCallback(async () => {
    try {
      const [d, t, n] = await Promise.all([
        api.get<Detail>(`/transactions/${encodeURIComponent(id)}`),
        api.get<{ items: TimelineEntry[] }>(`/transactions/${encodeURIComponent(id)}/events?perPage=500`),
        api.get<{ notifications: Notification[] }>(`/transactions/${encodeURIComponent(id)}/notifications`),
      ]);
      setDetail(d);
      setTimeline(t.items);
      setNotifications(n.notifications);
      setStatus('ready');
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) setStatus('missing');
      else {
        setError((e as Error).message);
        setStatus('error');
      }
    }
  }, [id]);
  useEffect(() => {
    setStatus('loading');
    void load();
  }, [load]);

  if (status === 'loading') return <p aria-busy="true">Loading payment…</p>;
  if (status === 'missing')
    return (
      <section>
        <h1>Payment not found</h1>
        <p>There is no payment {id} on this account.</p>
        <p>
          <a href="#/payments">Back to payments</a>
        </p>
      </section>
    );
  if (status === 'error' || !detail || !timeline)
    return (
      <p role="alert" class="error">
        {error}
      </p>
    );
  const tx = detail.transaction;
  const a = detail.aggregates;
  const inFlight = inFlightOf(detail.operations ?? []);
  const shownStatus = paymentStatus(tx, a, inFlight, (minor) => money(minor, tx.currency));
  return (
    <section aria-labelledby="payment-title">
      <p>
        <a href="#/payments">← Payments</a>
      </p>
      <h1 id="payment-title">Payment {tx.id}</h1>
      <dl class="facts">
        <dt>Reference</dt>
        <dd class="reference" data-testid="reference">
          {tx.reference ?? '—'}
        </dd>
        <dt>Status</dt>
        <dd data-testid="status">
          <StatusBadge status={shownStatus} /> {tx.errorCode ?? ''}
          {shownStatus.note && <span class="hint"> ({shownStatus.note})</span>}
        </dd>
        <dt>Amount</dt>
        <dd>{money(tx.amount, tx.currency)}</dd>
        <dt>Authorized</dt>
        <dd>{money(a.authorized, tx.currency)}</dd>
        <dt>Captured / refunded / voided / not yet captured</dt>
        <dd data-testid="aggregates">
          {money(a.captured, tx.currency)} / {money(a.refunded, tx.currency)} / {money(a.voided, tx.currency)} / {money(a.remaining, tx.currency)}
        </dd>
        <dt>Method</dt>
        <dd>{[tx.paymentMethodType, tx.paymentMethodSubType].filter(Boolean).join(' ')}</dd>
        <dt>Raw codes</dt>
        <dd>{codes(tx.externalStatusCodes) || '—'}</dd>
        <dt>Created</dt>
        <dd>{when(tx.createdAt)}</dd>
      </dl>

      <Actions tx={tx} limits={actionLimits(tx, a, inFlight)} status={shownStatus} onDone={load} />

      <h2 id="timeline-title">Timeline</h2>
      {timeline.length === 0 ? (
        <p class="empty">Nothing happened yet.</p>
      ) : (
        <ol class="timeline" aria-labelledby="timeline-title">
          {timeline.map((e) => (
            <li key={e.id} data-kind={e.kind}>
              <time dateTime={e.at}>{when(e.at)}</time> <span class="kind">{e.kind.replace(/_/g, ' ').toLowerCase()}</span> <span>{describe(e)}</span>
            </li>
          ))}
        </ol>
      )}

      <h2>Callbacks</h2>
      {notifications.length === 0 ? (
        <p class="empty">No callback (no notificationUrl, or no final state yet).</p>
      ) : (
        <ul class="callbacks">
          {notifications.map((n) => (
            <li key={n.id}>
              <span>
                {n.event} → {n.url}: {n.state}, {plural(n.attemptCount, 'attempt')}
                {n.lastStatus !== null ? `, last HTTP ${n.lastStatus}` : ''}
              </span>{' '}
              <ResendButton transactionId={tx.id} notificationId={n.id} onDone={load} />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function ResendButton({ transactionId, notificationId, onDone }: { transactionId: string; notificationId: string; onDone: () => Promise<void> }) {
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<string | null>(null);
  return (
    <>
      <button
        type="button"
        disabled={busy}
        onClick={async () => {
          if (!confirm('Send this callback again?')) return;
          setBusy(true);
          try {
            await api.post(
              `/transactions/${encodeURIComponent(transactionId)}/notifications/${encodeURIComponent(notificationId)}/resend`,
              {},
              newIdempotencyKey(),
            );
            setMessage('Queued again.');
            await onDone();
          } catch (e) {
            setMessage((e as Error).message);
          } finally {
            setBusy(false);
          }
        }}
      >
        Resend callback
      </button>
      {message && <span role="status">{message}</span>}
    </>
  );
}

/**
 * Capture / refund / void / renew — only those the payment allows now, each with the most it may
 * take shown and filled in (major units); the amount is checked here before anything is sent, then
 * a confirmation step; one Idempotency-Key per confirmation. Refusals of the service are shown
 * with their amounts in major units.
 */
function Actions({ tx, limits, status, onDone }: { tx: Transaction; limits: ActionLimits; status: PaymentStatus; onDone: () => Promise<void> }) {
  const actions = offered(limits);
  const [chosen, setChosen] = useState<Action | null>(null);
  const action: Action | null = chosen && actions.includes(chosen) ? chosen : (actions[0] ?? null);
  const max = action && action !== 'renew' ? limits[action] : 0;
  const [amountText, setAmountText] = useState<string | null>(null);
  const [pending, setPending] = useState<{ action: Action; amount: number | null; key: string } | null>(null);
  const [result, setResult] = useState<{ ok: boolean; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const needsAmount = action !== null && action !== 'renew';
  // The field starts at the most the action may take (what a full capture or refund asks for).
  const shown = amountText ?? (needsAmount ? major(max, tx.currency) : '');
  const pick = (a: Action) => {
    setChosen(a);
    setAmountText(null);
    setResult(null);
  };

  return (
    <section class="actions" aria-labelledby="actions-title">
      <h2 id="actions-title">Actions</h2>
      {action === null ? (
        <p class="hint" data-testid="no-actions">
          {nothingToDo(status, tx)}
        </p>
      ) : !pending ? (
        <form
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            setResult(null);
            let amount: number | null = null;
            if (needsAmount) {
              amount = parseAmount(shown, tx.currency);
              if (amount === null || amount < 1) {
                setResult({ ok: false, text: `Enter an amount in ${amountHint(tx.currency)}.` });
                return;
              }
              if (amount > max) {
                setResult({
                  ok: false,
                  text: `${money(amount, tx.currency)} is more than ${money(max, tx.currency)}, ${LIMIT_OF[action as Exclude<Action, 'renew'>]}.`,
                });
                return;
              }
            }
            setPending({ action, amount, key: newIdempotencyKey() });
          }}
        >
          <span class="field">
            <label for="action">Action</label>
            <select id="action" value={action} onChange={(e) => pick((e.currentTarget as HTMLSelectElement).value as Action)}>
              {ACTIONS.filter(([value]) => actions.includes(value)).map(([value, label]) => (
                <option value={value}>{label}</option>
              ))}
            </select>
          </span>
          {needsAmount && (
            <label>
              Amount ({tx.currency})
              <input
                name="amount"
                inputMode="decimal"
                value={shown}
                aria-describedby="amount-limit"
                onInput={(e) => setAmountText((e.currentTarget as HTMLInputElement).value)}
              />
            </label>
          )}
          <button type="submit">Review</button>
          {needsAmount && (
            <p id="amount-limit" class="hint limit" data-testid="amount-limit">
              At most {money(max, tx.currency)} ({LIMIT_OF[action as Exclude<Action, 'renew'>]}).
            </p>
          )}
          {action === 'renew' && <p class="hint limit">Extends the authorization of {money(limits.capture, tx.currency)} not yet captured.</p>}
        </form>
      ) : (
        <div role="group" aria-label="Confirm">
          <p>
            Confirm {pending.action}
            {pending.amount !== null ? ` of ${money(pending.amount, tx.currency)}` : ''} on payment {tx.id}?
          </p>
          <button
            type="button"
            disabled={busy}
            onClick={async () => {
              setBusy(true);
              const what = `${LABEL[pending.action]}${pending.amount !== null ? ` of ${money(pending.amount, tx.currency)}` : ''}`;
              try {
                const path = `/transactions/${encodeURIComponent(tx.id)}/${pending.action}`;
                const body = pending.amount === null ? {} : { amount: pending.amount };
                const res = await api.post<{
                  success: boolean;
                  state?: string | null;
                  errorCode?: { code: string; message: string } | null;
                  operations?: Array<{ state: string | null; errorCode: { code: string; message: string } | null }>;
                }>(path, body, pending.key);
                const failure = res.errorCode ?? res.operations?.find((o) => o.errorCode)?.errorCode ?? null;
                const processing = res.state === 'PROCESSING' || res.operations?.some((o) => o.state === 'PROCESSING');
                setResult(
                  res.success
                    ? { ok: true, text: processing ? `${what} sent; the acquirer has not answered yet.` : `${what} done.` }
                    : { ok: false, text: failure ? `${failure.code}: ${inMajorUnits(failure.message, tx.currency)}` : 'Refused.' },
                );
                setPending(null);
                setAmountText(null);
                await onDone();
              } catch (e) {
                setResult({ ok: false, text: inMajorUnits(errorText(e), tx.currency) });
                setPending(null);
                setAmountText(null);
                // The payment may have changed meanwhile: show it as it is now.
                await onDone().catch(() => undefined);
              } finally {
                setBusy(false);
              }
            }}
          >
            Confirm {pending.action}
          </button>{' '}
          <button type="button" onClick={() => setPending(null)}>
            Cancel
          </button>
        </div>
      )}
      <div aria-live="polite">
        {result && (
          <p role={result.ok ? 'status' : 'alert'} class={result.ok ? 'ok' : 'error'}>
            {result.text}
          </p>
        )}
      </div>
    </section>
  );
}
