/**
 * Payment links (one payment each) and multi-links (reusable: every visit starts a new session):
 * create from a form and show the QR code the API gives (`qrCode`, a base64 PNG, for a payment
 * link; `qrUrl`, a PNG served by the service, for a multi-link), the lists, and deactivation.
 */
import { useState } from 'preact/hooks';
import { api, newIdempotencyKey } from './api';
import { money, parseAmount, when } from './format';
import type { MultiLink, PageEnvelope, PaymentLink, PointOfSale } from './types';
import { ConfirmAction, errorText, ListState, ListTable, type Outcome, OutcomeLine, Pager, SelectFilter, useApi } from './ui';

/** The QR PNG of a multi-link from this origin: the dashboard is served by the same service (CSP img-src 'self'). */
const sameOrigin = (url: string): string => {
  try {
    return new URL(url, location.href).pathname;
  } catch {
    return '';
  }
};

/** A change of a list's state filter: back to the first page. */
const filterBy =
  (setState: (state: string) => void, setPage: (page: number) => void) =>
  (state: string): void => {
    setPage(1);
    setState(state);
  };

type Created = { kind: 'single'; url: string; qrSrc: string } | { kind: 'multi'; url: string; qrSrc: string };

function CreateLink({ onCreated }: { onCreated: () => void }) {
  const pos = useApi<PageEnvelope<{ pointOfSale: PointOfSale }>>('/management/point-of-sales?perPage=100');
  const online = (pos.data?.items ?? []).map((i) => i.pointOfSale).filter((p) => p.type === 'ONLINE');
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [created, setCreated] = useState<Created | null>(null);

  return (
    <section class="actions" aria-labelledby="create-link-title">
      <h2 id="create-link-title">New link</h2>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const data = new FormData(e.currentTarget as HTMLFormElement);
          const currency = String(data.get('currency') ?? '')
            .trim()
            .toUpperCase();
          const amount = parseAmount(String(data.get('amount') ?? ''), currency);
          if (!/^[A-Z]{3}$/.test(currency) || amount === null) {
            setOutcome({ ok: false, text: 'Enter a currency (e.g. DKK) and an amount in it, e.g. 49.00.' });
            return;
          }
          const reference = String(data.get('reference') ?? '').trim();
          const body = { pointOfSaleId: String(data.get('pointOfSaleId') ?? ''), amount, currency, ...(reference ? { reference } : {}) };
          setBusy(true);
          setOutcome(null);
          setCreated(null);
          try {
            if (data.get('kind') === 'multi') {
              const res = await api.post<MultiLink>('/multi-links', body, newIdempotencyKey());
              setCreated({ kind: 'multi', url: res.url, qrSrc: sameOrigin(res.qrUrl) });
            } else {
              const res = await api.post<{ id: string; url: string; qrCode: string }>('/payment-links', body, newIdempotencyKey());
              setCreated({ kind: 'single', url: res.url, qrSrc: `data:image/png;base64,${res.qrCode}` });
            }
            setOutcome({ ok: true, text: 'Link created.' });
            onCreated();
          } catch (err) {
            setOutcome({ ok: false, text: errorText(err) });
          } finally {
            setBusy(false);
          }
        }}
      >
        <label>
          Kind
          <select name="kind">
            <option value="single">Payment link (one payment)</option>
            <option value="multi">Multi-link (reusable)</option>
          </select>
        </label>
        <label>
          Point of sale
          <select name="pointOfSaleId" required>
            {online.map((p) => (
              <option value={p.id}>{`${p.name} (${p.domain})`}</option>
            ))}
          </select>
        </label>
        <label>
          Amount
          <input name="amount" inputMode="decimal" required placeholder="49.00" />
        </label>
        <label>
          Currency
          <input name="currency" required maxLength={3} size={4} defaultValue="DKK" />
        </label>
        <label>
          Reference (optional)
          <input name="reference" maxLength={36} pattern="[A-Za-z0-9\-]{1,36}" title="Letters, digits and hyphens, at most 36" />
        </label>
        <button type="submit" disabled={busy || online.length === 0}>
          Create link
        </button>
      </form>
      {pos.data && online.length === 0 && <p class="hint">Links need an ONLINE point of sale.</p>}
      <OutcomeLine outcome={outcome} />
      {created && (
        <figure class="qr">
          <img src={created.qrSrc} width={200} height={200} alt={`QR code of the ${created.kind === 'multi' ? 'multi-link' : 'payment link'}`} />
          <figcaption>
            <a href={created.url} target="_blank" rel="noopener noreferrer" class="reference">
              {created.url}
            </a>
          </figcaption>
        </figure>
      )}
    </section>
  );
}

function PaymentLinks({ version }: { version: number }) {
  const [state, setState] = useState('');
  const [page, setPage] = useState(1);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const list = useApi<PageEnvelope<{ paymentLink: PaymentLink }>>(`/payment-links?${state ? `state=${state}&` : ''}page=${page}&perPage=25`, version);
  const items = list.data?.items;
  return (
    <section aria-labelledby="payment-links-title">
      <h2 id="payment-links-title">One-time payment links</h2>
      <SelectFilter label="Payment link state" options={['ACTIVE', 'PAID', 'CANCELLED', 'EXPIRED']} value={state} onChange={filterBy(setState, setPage)} />
      <OutcomeLine outcome={outcome} />
      <ListState loaded={list} count={items?.length} empty="No payment links." />
      {items && items.length > 0 && (
        <ListTable caption="Payment links, newest first" columns={['Created', 'Link', 'Reference', ['Amount', 'num'], 'State', 'Expires', 'Action']}>
          {items.map(({ paymentLink: l }) => (
            <tr key={l.id}>
              <td>{when(l.createdAt)}</td>
              <td>
                <a href={l.url} target="_blank" rel="noopener noreferrer">
                  {l.id}
                </a>
              </td>
              <td class="reference">{l.reference ?? ''}</td>
              <td class="num">{money(l.amount, l.currency)}</td>
              <td>
                <span class={`state state-${l.state}`}>{l.state}</span>
                {l.transactionId && (
                  <>
                    {' '}
                    <a href={`#/payments/${encodeURIComponent(l.transactionId)}`}>{l.transactionId}</a>
                  </>
                )}
              </td>
              <td>{when(l.expiresAt)}</td>
              <td>
                {l.state === 'ACTIVE' && (
                  <ConfirmAction
                    label="Deactivate"
                    name={`Deactivate payment link ${l.id}`}
                    question={`Deactivate payment link ${l.id}? The customer can no longer pay with it.`}
                    run={(key) => api.del(`/payment-links/${encodeURIComponent(l.id)}`, key)}
                    done="Deactivated."
                    onDone={list.reload}
                    report={setOutcome}
                  />
                )}
              </td>
            </tr>
          ))}
        </ListTable>
      )}
      <Pager page={list.data} onPage={setPage} />
    </section>
  );
}

function MultiLinks({ version }: { version: number }) {
  const [state, setState] = useState('');
  const [page, setPage] = useState(1);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const list = useApi<PageEnvelope<MultiLink>>(`/multi-links?${state ? `state=${state}&` : ''}page=${page}&perPage=25`, version);
  const items = list.data?.items;
  return (
    <section aria-labelledby="multi-links-title">
      <h2 id="multi-links-title">Multi-links</h2>
      <SelectFilter label="Multi-link state" options={['ACTIVE', 'DEACTIVATED']} value={state} onChange={filterBy(setState, setPage)} />
      <OutcomeLine outcome={outcome} />
      <ListState loaded={list} count={items?.length} empty="No multi-links." />
      {items && items.length > 0 && (
        <ListTable caption="Multi-links, newest first" columns={['Created', 'Link', ['Amount', 'num'], 'State', 'QR code', 'Action']}>
          {items.map(({ multiLink: l, url, qrUrl }) => (
            <tr key={l.id}>
              <td>{when(l.createdAt)}</td>
              <td>
                <a href={url} target="_blank" rel="noopener noreferrer">
                  {l.id}
                </a>
              </td>
              <td class="num">{money(l.amount, l.currency)}</td>
              <td>
                <span class={`state state-${l.state}`}>{l.state}</span>
              </td>
              <td>
                <details>
                  <summary>Show QR code</summary>
                  <img src={sameOrigin(qrUrl)} width={160} height={160} alt={`QR code of multi-link ${l.id}`} loading="lazy" />
                </details>
              </td>
              <td>
                {l.state === 'ACTIVE' && (
                  <ConfirmAction
                    label="Deactivate"
                    name={`Deactivate multi-link ${l.id}`}
                    question={`Deactivate multi-link ${l.id}? New visits get a "no longer active" page; sessions already started go on.`}
                    run={(key) => api.del(`/multi-links/${encodeURIComponent(l.id)}`, key)}
                    done="Deactivated."
                    onDone={list.reload}
                    report={setOutcome}
                  />
                )}
              </td>
            </tr>
          ))}
        </ListTable>
      )}
      <Pager page={list.data} onPage={setPage} />
    </section>
  );
}

export function Links() {
  // Bumped after a create so both lists load again.
  const [version, setVersion] = useState(0);
  return (
    <section aria-labelledby="links-title">
      <h1 id="links-title">Payment links</h1>
      <CreateLink onCreated={() => setVersion((v) => v + 1)} />
      <PaymentLinks version={version} />
      <MultiLinks version={version} />
    </section>
  );
}
