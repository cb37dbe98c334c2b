/**
 * Subscriptions: the filtered list (the filters of GET /subscriptions), one subscription with its
 * payment method, and disabling it behind a confirmation (DELETE; the API has no way back, so
 * there is no resume — a billing agreement on it can be stopped and resumed instead).
 */
import { useState } from 'preact/hooks';
import { api } from './api';
import { when } from './format';
import type { PageEnvelope, PaymentMethod, Subscription } from './types';
import { ConfirmAction, Facts, formQuery, ListState, ListTable, NotFound, type Outcome, OutcomeLine, Pager, SelectFilter, useApi } from './ui';

type Item = { subscription: Subscription; paymentMethod: PaymentMethod | null };
const TEXT_FILTERS = [
  ['reference', 'Reference'],
  ['customerId', 'Customer id'],
  ['currency', 'Currency'],
  ['pointOfSaleId', 'Point of sale id'],
] as const;

const every = (s: Subscription) => (s.interval ? `every ${s.interval.frequency} ${s.interval.period}` : '');

export function Subscriptions() {
  const [query, setQuery] = useState('');
  const [page, setPage] = useState(1);
  const list = useApi<PageEnvelope<Item>>(`/subscriptions?${query}${query ? '&' : ''}page=${page}&perPage=25`);
  const items = list.data?.items;
  return (
    <section aria-labelledby="subscriptions-title">
      <h1 id="subscriptions-title">Subscriptions</h1>
      <form
        class="filters"
        role="search"
        aria-label="Filter subscriptions"
        onSubmit={(e) => {
          e.preventDefault();
          const q = formQuery(e.currentTarget as HTMLFormElement, ['state', 'type', ...TEXT_FILTERS.map(([n]) => n)]);
          if (q.has('currency')) q.set('currency', q.get('currency')!.toUpperCase());
          setPage(1);
          setQuery(q.toString());
        }}
      >
        <SelectFilter label="State" name="state" options={['PENDING', 'ACTIVE', 'INVALID', 'DISABLED']} />
        <SelectFilter label="Type" name="type" options={['SCHEDULED', 'UNSCHEDULED']} />
        {TEXT_FILTERS.map(([name, label]) => (
          <label>
            {label}
            <input name={name} type="text" />
          </label>
        ))}
        <button type="submit">Filter</button>
      </form>
      <ListState loaded={list} count={items?.length} empty="No subscriptions match." />
      {items && items.length > 0 && (
        <ListTable
          caption="Subscriptions, newest first"
          columns={['Created', 'Subscription', 'Reference', 'Customer', 'State', 'Type', 'Card']}
          busy={list.loading}
        >
          {items.map(({ subscription: s, paymentMethod: pm }) => (
            <tr key={s.id}>
              <td>{when(s.createdAt)}</td>
              <td>
                <a href={`#/subscriptions/${encodeURIComponent(s.id)}`}>{s.id}</a>
              </td>
              <td class="reference">{s.reference ?? ''}</td>
              <td class="reference">{s.customerId ?? ''}</td>
              <td>
                <span class={`state state-${s.state}`}>{s.state}</span>
              </td>
              <td>{`${s.type} ${every(s)}`.trim()}</td>
              <td>{pm?.displayText ?? ''}</td>
            </tr>
          ))}
        </ListTable>
      )}
      <Pager page={list.data} onPage={setPage} />
    </section>
  );
}

export function SubscriptionDetail({ id }: { id: string }) {
  const loaded = useApi<Item>(`/subscriptions/${encodeURIComponent(id)}`);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  if (loaded.notFound) return <NotFound what="Subscription" back="#/subscriptions" backLabel="Back to subscriptions" />;
  if (!loaded.data) return <ListState loaded={loaded} count={undefined} empty="" />;
  const { subscription: s, paymentMethod: pm } = loaded.data;
  return (
    <section aria-labelledby="subscription-title">
      <p>
        <a href="#/subscriptions">Back to subscriptions</a>
      </p>
      <h1 id="subscription-title">Subscription {s.id}</h1>
      <Facts
        rows={[
          ['State', <span data-testid="subscription-state">{s.state}</span>],
          ['Status reason', s.statusReason],
          ['Reference', <span class="reference">{s.reference ?? ''}</span>],
          ['Description', <span class="reference">{s.description ?? ''}</span>],
          ['Customer', s.customerId],
          ['Type', `${s.type} ${every(s)}`.trim()],
          ['Currency', s.currency],
          ['Expires', s.expiryDate],
          ['Point of sale', s.pointOfSaleId],
          ['Created', when(s.createdAt)],
        ]}
      />
      <h2>Payment method</h2>
      {pm ? (
        <Facts
          rows={[
            ['Method', [pm.type, pm.subType].filter(Boolean).join(' ')],
            ['Card', pm.displayText],
            ['Holder', pm.holderName],
            ['Expiry', pm.expiry],
          ]}
        />
      ) : (
        <p class="empty">The payment method was deleted.</p>
      )}
      {s.state === 'ACTIVE' && (
        <section class="actions" aria-labelledby="subscription-actions">
          <h2 id="subscription-actions">Actions</h2>
          <ConfirmAction
            label="Disable subscription"
            question={`Disable subscription ${s.id}? It cannot be charged again, and this cannot be undone.`}
            run={(key) => api.del(`/subscriptions/${encodeURIComponent(s.id)}`, key)}
            done="The subscription is disabled."
            onDone={loaded.reload}
            report={setOutcome}
          />
        </section>
      )}
      <OutcomeLine outcome={outcome} />
    </section>
  );
}
