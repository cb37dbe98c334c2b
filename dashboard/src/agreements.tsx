/**
 * Billing agreements (subscription billing): the list (GET /subscriptions/billing/agreements takes
 * paging only), one agreement with its plan and charges, stop and resume behind a confirmation.
 */
import { useState } from 'preact/hooks';
import { api } from './api';
import { money, when } from './format';
import type { BillingAgreement, BillingCharge, BillingPlan, PageEnvelope } from './types';
import { ConfirmAction, Facts, ListState, ListTable, NotFound, type Outcome, OutcomeLine, Pager, useApi } from './ui';

const BASE = '/subscriptions/billing/agreements';
const link = (id: string) => `#/agreements/${encodeURIComponent(id)}`;

export function Agreements() {
  const [page, setPage] = useState(1);
  const list = useApi<PageEnvelope<{ billingAgreement: BillingAgreement }>>(`${BASE}?page=${page}&perPage=25`);
  const items = list.data?.items;
  return (
    <section aria-labelledby="agreements-title">
      <h1 id="agreements-title">Billing agreements</h1>
      <ListState loaded={list} count={items?.length} empty="No billing agreements yet." />
      {items && items.length > 0 && (
        <ListTable caption="Billing agreements, newest first" columns={['Created', 'Agreement', 'Reference', 'State', 'Next charge']} busy={list.loading}>
          {items.map(({ billingAgreement: a }) => (
            <tr key={a.id}>
              <td>{when(a.createdAt)}</td>
              <td>
                <a href={link(a.id)}>{a.id}</a>
              </td>
              <td class="reference">{a.reference ?? ''}</td>
              <td>
                <span class={`state state-${a.state}`}>{a.state}</span>
              </td>
              <td>{when(a.nextChargeAt)}</td>
            </tr>
          ))}
        </ListTable>
      )}
      <Pager page={list.data} onPage={setPage} />
    </section>
  );
}

/** Tomorrow as YYYY-MM-DD: the default first charge of a resumed agreement. */
const tomorrow = (): string => new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);

export function AgreementDetail({ id }: { id: string }) {
  const loaded = useApi<{ billingAgreement: BillingAgreement }>(`${BASE}/${encodeURIComponent(id)}`);
  const a = loaded.data?.billingAgreement;
  const plan = useApi<{ billingPlan: BillingPlan }>(a ? `/subscriptions/billing/plans/${encodeURIComponent(a.billingPlanId)}` : null);
  const charges = useApi<PageEnvelope<{ billingAgreementCharge: BillingCharge }>>(
    a ? `/subscriptions/billing/charges?billingAgreementId=${encodeURIComponent(a.id)}&perPage=25` : null,
  );
  const [resumeOn, setResumeOn] = useState(tomorrow());
  const [outcome, setOutcome] = useState<Outcome | null>(null);

  if (loaded.notFound) return <NotFound what="Billing agreement" back="#/agreements" backLabel="Back to billing agreements" />;
  if (!a) return <ListState loaded={loaded} count={undefined} empty="" />;
  const p = plan.data?.billingPlan;
  return (
    <section aria-labelledby="agreement-title">
      <p>
        <a href="#/agreements">Back to billing agreements</a>
      </p>
      <h1 id="agreement-title">Billing agreement {a.id}</h1>
      <Facts
        testId="agreement-facts"
        rows={[
          ['State', <span data-testid="agreement-state">{a.state}</span>],
          ['Reference', <span class="reference">{a.reference ?? ''}</span>],
          ['Plan', p ? `${p.name} — ${money(p.amount, p.currency)} every ${p.interval.frequency} ${p.interval.period}` : a.billingPlanId],
          ['Subscription', a.subscriptionId ? <a href={`#/subscriptions/${encodeURIComponent(a.subscriptionId)}`}>{a.subscriptionId}</a> : null],
          ['Customer', a.customerId],
          ['Next charge', when(a.nextChargeAt)],
          ['Last charge', when(a.lastChargeAt)],
          ['Day of month', a.desiredDate],
          ['State changed', when(a.stateChangedAt)],
          ['Created', when(a.createdAt)],
        ]}
      />
      <section class="actions" aria-labelledby="agreement-actions">
        <h2 id="agreement-actions">Actions</h2>
        {a.state === 'ACTIVE' && (
          <ConfirmAction
            label="Stop agreement"
            question={`Stop billing agreement ${a.id}? No further charges are made until it is resumed.`}
            run={(key) => api.post(`${BASE}/${encodeURIComponent(a.id)}/stop`, {}, key)}
            done="The agreement is stopped."
            onDone={loaded.reload}
            report={setOutcome}
          />
        )}
        {a.state === 'STOPPED' && (
          <>
            <label>
              First charge on
              <input type="date" value={resumeOn} required onInput={(e) => setResumeOn((e.currentTarget as HTMLInputElement).value)} />
            </label>
            <ConfirmAction
              label="Resume agreement"
              question={`Resume billing agreement ${a.id} with the first charge on ${resumeOn}?`}
              run={(key) => api.post(`${BASE}/${encodeURIComponent(a.id)}/resume`, { nextChargeAt: resumeOn }, key)}
              done="The agreement is active again."
              onDone={loaded.reload}
              report={setOutcome}
            />
          </>
        )}
        {a.state === 'PENDING' && <p class="hint">Waiting for the customer to complete the payment session.</p>}
        <OutcomeLine outcome={outcome} />
      </section>
      <h2>Charges</h2>
      <ListState loaded={charges} count={charges.data?.items.length} empty="No charges yet." />
      {charges.data && charges.data.items.length > 0 && (
        <ListTable caption="Charges of this agreement, newest first" columns={['Created', 'State', 'Attempts', 'Payment']}>
          {charges.data.items.map(({ billingAgreementCharge: c }) => (
            <tr key={c.id}>
              <td>{when(c.createdAt)}</td>
              <td>
                <span class={`state state-${c.state}`}>{c.state}</span>
              </td>
              <td class="num">{c.attempts}</td>
              <td>{c.transactionId ? <a href={`#/payments/${encodeURIComponent(c.transactionId)}`}>{c.transactionId}</a> : ''}</td>
            </tr>
          ))}
        </ListTable>
      )}
    </section>
  );
}
