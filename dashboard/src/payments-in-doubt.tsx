/**
 * Operator: payments in doubt (INTERFACE §12.4, docs/runbook.md "Payments in doubt") — captures,
 * refunds and payouts sent at most once to an acquirer that takes no request twice, whose answer
 * never came. Each is listed with what was sent and when; the operator checks with the acquirer and
 * marks it succeeded or failed after a confirmation that names the amount and the consequence. The
 * partner API applies it as the acquirer's answer would have been (final state, callback, events).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, newIdempotencyKey } from './api';
import { money, when } from './format';
import { type Column, errorText, ListTable, useLoad } from './ui';

interface InDoubt {
  operationId: string;
  accountId: string;
  transactionId: string;
  acquirer: string;
  call: 'authorize' | 'capture' | 'refund' | 'void' | 'renew' | 'payout';
  amount: number;
  currency: string;
  sentAt: string;
  inDoubtAt: string;
  reason: string | null;
  acquirerReference: string | null;
}

interface Resolved {
  operationId: string;
  transactionId: string;
  state: 'SUCCESS' | 'FAILED';
  transactionState: 'PENDING' | 'PROCESSING' | 'SUCCESS' | 'FAILED';
}

type Outcome = 'SUCCEEDED' | 'FAILED';

const COLUMNS: Column[] = ['Account', 'Transaction', 'Sent', ['Amount', 'num'], 'Acquirer', 'Sent at', 'In doubt since', 'Reason', 'Resolve'];

const PATH = '/partner/payments-in-doubt';
/** The API's largest page; the list is oldest first, so what is left out is the newest. */
const LIMIT = 500;

const CALL_NAMES: Record<InDoubt['call'], string> = {
  authorize: 'authorization',
  capture: 'capture',
  refund: 'refund',
  void: 'void',
  renew: 'renewal',
  payout: 'payout (credit)',
};

/** "capture of 3.00 DKK" */
const whatOf = (r: InDoubt): string => `${CALL_NAMES[r.call] ?? r.call} of ${money(r.amount, r.currency)}`;
const capitalized = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);

/** What marking it so does to the money, in the operator's words. */
function consequence(r: InDoubt, outcome: Outcome): string {
  const amount = money(r.amount, r.currency);
  if (outcome === 'SUCCEEDED') {
    switch (r.call) {
      case 'capture':
        return `${amount} counts as captured and is settled to the merchant.`;
      case 'refund':
        return `${amount} counts as refunded to the cardholder.`;
      case 'payout':
        return `${amount} counts as paid out to the card.`;
      default:
        return `It is applied as approved for ${amount}.`;
    }
  }
  switch (r.call) {
    case 'capture':
      return `It is applied as a decline (ACQUIRER_TIMEOUT): the ${amount} held is released and can be captured again.`;
    case 'refund':
      return `It is applied as a decline (ACQUIRER_TIMEOUT): the ${amount} held is released and can be refunded again.`;
    case 'payout':
      return `It is applied as a decline (ACQUIRER_TIMEOUT): nothing is paid out and the ${amount} held is released.`;
    default:
      return `It is applied as a decline (ACQUIRER_TIMEOUT) for ${amount}.`;
  }
}

/** The open confirmation: one at a time, with the Idempotency-Key drawn when it opened (a retried confirm replays). */
interface Confirming {
  operationId: string;
  outcome: Outcome;
  key: string;
  error: string | null;
}

export function PaymentsInDoubt() {
  const { data, error, setData, load } = useLoad(async () => {
    const { items } = await api.get<{ items: InDoubt[] }>(`${PATH}?limit=${LIMIT}`);
    // The list names accounts by id; their names are read once each (an account that cannot be read keeps its id).
    const ids = [...new Set(items.map((i) => i.accountId))];
    const named = await Promise.allSettled(ids.map((id) => api.get<{ account: { name: string } }>(`/partner/accounts/${encodeURIComponent(id)}`)));
    const names: Record<string, string> = {};
    named.forEach((r, n) => {
      if (r.status === 'fulfilled') names[ids[n]!] = r.value.account.name;
    });
    return { items, names };
  });
  const [confirming, setConfirming] = useState<Confirming | null>(null);
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const messageRef = useRef<HTMLParagraphElement>(null);
  /** After a row leaves the list, focus goes to the line saying what happened (not lost to the page). */
  const [focusMessage, setFocusMessage] = useState(0);
  useEffect(() => {
    if (focusMessage) messageRef.current?.focus();
  }, [focusMessage]);

  const items = data?.items ?? null;
  const nameOf = (accountId: string) => data?.names[accountId] ?? null;

  const leave = (operationId: string, text: string, ok: boolean) => {
    if (data) setData({ ...data, items: data.items.filter((i) => i.operationId !== operationId) });
    setConfirming(null);
    setMessage({ ok, text });
    setFocusMessage((n) => n + 1);
  };

  const resolve = async (row: InDoubt, c: Confirming) => {
    setBusy(true);
    try {
      const res = await api.post<Resolved>(`${PATH}/${encodeURIComponent(row.operationId)}/resolve`, { outcome: c.outcome }, c.key);
      leave(
        row.operationId,
        `${capitalized(whatOf(row))} on transaction ${row.transactionId} marked ${c.outcome === 'SUCCEEDED' ? 'succeeded' : 'failed'}: ` +
          `the ${CALL_NAMES[row.call] ?? row.call} is ${res.state}, the transaction ${res.transactionState}. The merchant gets its callback and webhook.`,
        true,
      );
      await load();
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) {
        // Resolved meanwhile (another operator, another tab): it is not in doubt any more.
        leave(row.operationId, `${capitalized(whatOf(row))} on transaction ${row.transactionId} is no longer in doubt: it was resolved meanwhile.`, false);
        await load();
      } else {
        setConfirming({ ...c, error: errorText(e) });
      }
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="in-doubt-title">
      <h1 id="in-doubt-title">Payments in doubt</h1>
      <p class="hint" data-testid="in-doubt-explanation">
        A capture, refund or payout (credit) is in doubt when its request may have reached the acquirer but no answer came back; it is never sent again, and it
        stays PROCESSING with its amount held until you resolve it. Check with the acquirer first (its dashboard or support, with the transaction and the time
        it was sent): what you mark is final, and the merchant is told.
      </p>
      <button type="button" onClick={() => void load()}>
        Refresh
      </button>
      <div aria-live="polite">
        {message && (
          <p ref={messageRef} tabIndex={-1} role={message.ok ? 'status' : 'alert'} class={message.ok ? 'ok' : 'error'} data-testid="in-doubt-outcome">
            {message.text}
          </p>
        )}
      </div>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {!items && !error && <p aria-busy="true">Loading…</p>}
      {items && items.length === 0 && (
        <p class="empty" data-testid="in-doubt-empty">
          Nothing in doubt: every capture, refund and payout sent to an acquirer has its answer.
        </p>
      )}
      {items && items.length > 0 && (
        <ListTable caption="Operations in doubt, oldest first" columns={COLUMNS}>
          {items.map((r) => (
            <Row
              key={r.operationId}
              row={r}
              accountName={nameOf(r.accountId)}
              confirming={confirming?.operationId === r.operationId ? confirming : null}
              busy={busy}
              onOpen={(outcome) => {
                setMessage(null);
                setConfirming({ operationId: r.operationId, outcome, key: newIdempotencyKey(), error: null });
              }}
              onCancel={() => setConfirming(null)}
              onConfirm={(c) => void resolve(r, c)}
            />
          ))}
        </ListTable>
      )}
      {items && items.length === LIMIT && <p class="empty">Showing the oldest {LIMIT}; resolve some to see the rest.</p>}
    </section>
  );
}

/** A time as the other views show it, broken (if at all) between the date and the time of day. */
function Time({ iso }: { iso: string }) {
  const [day, time] = when(iso).split(' ');
  return (
    <time dateTime={iso}>
      <span class="nowrap">{day}</span> <span class="nowrap">{time}</span>
    </time>
  );
}

function Row({
  row: r,
  accountName,
  confirming,
  busy,
  onOpen,
  onCancel,
  onConfirm,
}: {
  row: InDoubt;
  accountName: string | null;
  confirming: Confirming | null;
  busy: boolean;
  onOpen: (outcome: Outcome) => void;
  onCancel: () => void;
  onConfirm: (c: Confirming) => void;
}) {
  const what = whatOf(r);
  const confirmRef = useRef<HTMLButtonElement>(null);
  const openers = { SUCCEEDED: useRef<HTMLButtonElement>(null), FAILED: useRef<HTMLButtonElement>(null) };
  /** Set by Cancel / Escape: focus goes back to the button that opened the confirmation. */
  const returnTo = useRef<Outcome | null>(null);
  useEffect(() => {
    if (confirming) confirmRef.current?.focus();
    else if (returnTo.current) {
      openers[returnTo.current].current?.focus();
      returnTo.current = null;
    }
  }, [confirming?.operationId, confirming?.outcome]);
  const cancel = () => {
    returnTo.current = confirming?.outcome ?? null;
    onCancel();
  };
  const verb = (o: Outcome) => (o === 'SUCCEEDED' ? 'succeeded' : 'failed');
  const questionId = `confirm-${r.operationId}`;

  return (
    <>
      <tr data-operation={r.operationId} class={confirming ? 'confirming' : undefined}>
        <td>
          {accountName ?? ''}
          {accountName && <br />}
          <span class="hint id">{r.accountId}</span>
        </td>
        <td class="nowrap">{r.transactionId}</td>
        <td>{CALL_NAMES[r.call] ?? r.call}</td>
        <td class="num nowrap">{money(r.amount, r.currency)}</td>
        <td>{r.acquirer}</td>
        <td>
          <Time iso={r.sentAt} />
        </td>
        <td>
          <Time iso={r.inDoubtAt} />
        </td>
        <td class="reference">
          {r.reason ?? '—'}
          {r.acquirerReference && (
            <>
              <br />
              <span class="hint">acquirer id {r.acquirerReference}</span>
            </>
          )}
        </td>
        <td>
          <div class="row-actions stacked">
            {(['SUCCEEDED', 'FAILED'] as const).map((o) => (
              <button
                type="button"
                ref={openers[o]}
                class={o === 'FAILED' ? 'danger' : undefined}
                aria-label={`Mark the ${what} on transaction ${r.transactionId} ${verb(o)}`}
                aria-expanded={confirming?.outcome === o}
                aria-controls={confirming?.outcome === o ? questionId : undefined}
                disabled={busy}
                onClick={() => (confirming?.outcome === o ? cancel() : onOpen(o))}
              >
                Mark {verb(o)}
              </button>
            ))}
          </div>
        </td>
      </tr>
      {confirming && (
        <tr class="confirm-row" data-confirm={r.operationId}>
          <td colSpan={COLUMNS.length}>
            <div class="confirm-action">
              <div
                role="group"
                id={questionId}
                aria-labelledby={`${questionId}-text`}
                onKeyDown={(e) => {
                  if (e.key === 'Escape' && !busy) cancel();
                }}
              >
                <p id={`${questionId}-text`}>
                  Mark the {what} on transaction {r.transactionId} as {verb(confirming.outcome)}? {consequence(r, confirming.outcome)} The transaction&apos;s
                  state and the merchant&apos;s callback and webhook follow; this cannot be undone.
                </p>
                <button
                  type="button"
                  ref={confirmRef}
                  class={confirming.outcome === 'FAILED' ? 'danger' : undefined}
                  disabled={busy}
                  onClick={() => onConfirm(confirming)}
                >
                  Confirm: mark {verb(confirming.outcome)}
                </button>{' '}
                <button type="button" disabled={busy} onClick={cancel}>
                  Cancel
                </button>
                {confirming.error && (
                  <p role="alert" class="error">
                    {confirming.error}
                  </p>
                )}
              </div>
            </div>
          </td>
        </tr>
      )}
    </>
  );
}
