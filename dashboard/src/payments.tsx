import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from './api';
import { money, parseAmount, when } from './format';
import { paymentStatus } from './payment-status';
import type { Aggregates, CursorPage, Transaction } from './types';
import { ListTable, StatusBadge } from './ui';

/** The payment list with each payment's aggregates (src/dashboard/payments.routes.ts: GET /transactions's filters and cursor). */
const LIST = '/dashboard/api/payments';

/** The `state` filter of GET /transactions, in words: the service filters by state, the derived status needs the aggregates. */
const STATE_FILTER: Array<[value: string, label: string]> = [
  ['', 'any'],
  ['SUCCESS', 'Succeeded'],
  ['FAILED', 'Failed'],
  ['PENDING', 'Pending'],
  ['PROCESSING', 'Processing'],
];

const TRANSACTION_ID = /^[0-9A-Za-z]{11}$/;
/** Text filters of GET /transactions, passed through as typed (seed §4.1). */
const TEXT_FILTERS = [
  ['currency', 'Currency'],
  ['paymentMethodType', 'Payment method'],
  ['paymentMethodSubType', 'Brand'],
  ['errorCode', 'Error code'],
  ['customerId', 'Customer id'],
  ['pointOfSaleId', 'Point of sale id'],
  ['sessionId', 'Session id'],
  ['terminalId', 'Terminal id'],
  ['subscriptionId', 'Subscription id'],
  ['billingAgreementChargeId', 'Billing charge id'],
] as const;

/**
 * The form's values → query parameters of GET /transactions (empty fields left out). The amount is
 * typed in major units of the chosen currency and sent in minor units; an amount without a
 * currency, or one that is not an amount of it, is a message (thrown) instead of a query.
 */
export function filtersToQuery(form: HTMLFormElement): URLSearchParams {
  const data = new FormData(form);
  const q = new URLSearchParams();
  const search = String(data.get('search') ?? '').trim();
  if (search) {
    q.set('reference', search);
    q.set('referenceMode', 'PREFIX');
  }
  for (const name of ['state', 'type', ...TEXT_FILTERS.map(([n]) => n)]) {
    const v = String(data.get(name) ?? '').trim();
    if (v) q.set(name, name === 'currency' ? v.toUpperCase() : v);
  }
  for (const name of ['createdAfter', 'createdBefore']) {
    const v = String(data.get(name) ?? '');
    if (v) q.set(name, new Date(v + (name === 'createdAfter' ? 'T00:00:00.000Z' : 'T23:59:59.999Z')).toISOString());
  }
  const amount = String(data.get('amount') ?? '').trim();
  if (amount) {
    const currency = String(data.get('currency') ?? '')
      .trim()
      .toUpperCase();
    if (!currency) throw new Error('Give a currency to filter by amount (the amount is in its units, e.g. 10.00 DKK).');
    const minor = parseAmount(amount, currency);
    if (minor === null) throw new Error(`The amount ${amount} is not an amount in ${currency}.`);
    q.set('amount', String(minor));
    q.set('amountMode', String(data.get('amountMode') ?? 'EQUAL'));
  }
  return q;
}

export function Payments() {
  const [query, setQuery] = useState<URLSearchParams>(new URLSearchParams());
  const [cursors, setCursors] = useState<string[]>(['']);
  const [page, setPage] = useState<CursorPage<{ transaction: Transaction; aggregates: Aggregates }> | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const offset = cursors[cursors.length - 1]!;

  useEffect(() => {
    const q = new URLSearchParams(query);
    q.set('perPage', '25');
    if (offset) q.set('offset', offset);
    setLoading(true);
    api.getRoot<CursorPage<{ transaction: Transaction; aggregates: Aggregates }>>(`${LIST}?${q}`).then(
      (p) => {
        setPage(p);
        setError(null);
        setLoading(false);
      },
      (e: ApiError) => {
        setError(
          e.fields
            ? `${e.message} ${Object.entries(e.fields)
                .map(([f, m]) => `${f}: ${m.join(', ')}`)
                .join('; ')}`
            : e.message,
        );
        setLoading(false);
      },
    );
  }, [query, offset]);

  return (
    <section aria-labelledby="payments-title">
      <h1 id="payments-title">Payments</h1>
      <form
        class="filters"
        role="search"
        onSubmit={async (e) => {
          e.preventDefault();
          const form = e.currentTarget as HTMLFormElement;
          const search = String(new FormData(form).get('search') ?? '').trim();
          if (TRANSACTION_ID.test(search)) {
            // An id: open it when it is one of ours, else search it as a reference.
            try {
              await api.get(`/transactions/${encodeURIComponent(search.toUpperCase())}`);
              location.hash = `#/payments/${encodeURIComponent(search.toUpperCase())}`;
              return;
            } catch {
              /* not an id of ours: a reference */
            }
          }
          try {
            const next = filtersToQuery(form);
            setError(null);
            setCursors(['']);
            setQuery(next);
          } catch (err) {
            setError((err as Error).message);
          }
        }}
      >
        <label>
          Search by reference or id
          <input name="search" type="search" placeholder="order-1234 or LDG7M4WW44G" />
        </label>
        <label>
          Outcome
          <select name="state">
            {STATE_FILTER.map(([value, label]) => (
              <option value={value}>{label}</option>
            ))}
          </select>
        </label>
        <label>
          Type
          <select name="type">
            <option value="">any</option>
            <option value="PAYMENT">Payment</option>
            <option value="MOTO">MOTO</option>
            <option value="PAYOUT">Payout</option>
          </select>
        </label>
        <label>
          Created from
          <input name="createdAfter" type="date" />
        </label>
        <label>
          Created to
          <input name="createdBefore" type="date" />
        </label>
        <details>
          <summary>More filters</summary>
          {TEXT_FILTERS.map(([name, label]) => (
            <label>
              {label}
              <input name={name} type="text" />
            </label>
          ))}
          <label>
            Amount (in the currency above, e.g. 10.00)
            <input name="amount" inputMode="decimal" />
          </label>
          <label>
            Amount is
            <select name="amountMode">
              <option value="EQUAL">equal to</option>
              <option value="LESS_THAN">less than</option>
              <option value="GREATER_THAN">greater than</option>
            </select>
          </label>
        </details>
        <button type="submit">Search</button>
        <a class="button" href={`/dashboard/api/transactions.csv?${query}`} download>
          Export CSV
        </a>
      </form>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {loading && !page && <p aria-busy="true">Loading…</p>}
      {page && page.items.length === 0 && <p class="empty">No payments match.</p>}
      {page && page.items.length > 0 && (
        <ListTable
          caption="Payments, newest first"
          columns={['Created', 'Id', 'Reference', ['Amount', 'num'], ['Captured', 'num'], ['Refunded', 'num'], 'Status', 'Method']}
          busy={loading}
        >
          {page.items.map(({ transaction: tx, aggregates: a }) => {
            const status = paymentStatus(tx, a);
            return (
              <tr key={tx.id} data-id={tx.id}>
                <td>{when(tx.createdAt)}</td>
                <td>
                  <a href={`#/payments/${encodeURIComponent(tx.id)}`}>{tx.id}</a>
                </td>
                <td class="reference">{tx.reference ?? ''}</td>
                <td class="num">{money(tx.amount, tx.currency)}</td>
                <td class="num" data-testid="captured">
                  {a.captured > 0 ? money(a.captured, tx.currency) : '—'}
                </td>
                <td class="num" data-testid="refunded">
                  {a.refunded > 0 ? money(a.refunded, tx.currency) : '—'}
                </td>
                <td>
                  <StatusBadge status={status} />
                  {tx.errorCode ? <span class="error-code"> {tx.errorCode}</span> : ''}
                </td>
                <td>{[tx.paymentMethodType, tx.paymentMethodSubType].filter(Boolean).join(' ')}</td>
              </tr>
            );
          })}
        </ListTable>
      )}
      <nav class="pager" aria-label="Pages">
        <button type="button" disabled={cursors.length <= 1} onClick={() => setCursors(cursors.slice(0, -1))}>
          Previous page
        </button>
        <button type="button" disabled={!page?.hasMore} onClick={() => page?.nextOffset && setCursors([...cursors, page.nextOffset])}>
          Next page
        </button>
      </nav>
    </section>
  );
}
