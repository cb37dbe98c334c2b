/**
 * Webhooks: the list with pause / resume / delete, a create form (URL on the approved domain,
 * events, secret), and one webhook's recent deliveries with their failure rate.
 */
import { useState } from 'preact/hooks';
import { api, newIdempotencyKey } from './api';
import { plural, when } from './format';
// The service's own catalogue (a module of constants, no imports): one list for the API and the form.
import { WEBHOOK_EVENTS } from '../../src/modules/webhooks/webhook';
import type { Delivery, PageEnvelope, Webhook } from './types';
import { failureRate } from './webhook-stats';
import { ConfirmAction, errorText, Facts, ListState, ListTable, NotFound, type Outcome, OutcomeLine, Pager, useApi } from './ui';

const status = (w: Webhook) => (w.pausedAt ? `Paused (${w.pauseReason ?? 'paused'}) since ${when(w.pausedAt)}` : 'Active');

/** Pause or resume at once (both are reversible); each click has its own Idempotency-Key. */
function PauseResume({ webhook, onDone }: { webhook: Webhook; onDone: () => Promise<void> }) {
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const action = webhook.pausedAt ? 'resume' : 'pause';
  return (
    <>
      <button
        type="button"
        aria-label={`${action === 'pause' ? 'Pause' : 'Resume'} webhook ${webhook.url}`}
        disabled={busy}
        onClick={async () => {
          setBusy(true);
          try {
            await api.post(`/webhooks/${encodeURIComponent(webhook.id)}/${action}`, {}, newIdempotencyKey());
            setOutcome({ ok: true, text: action === 'pause' ? 'Webhook paused.' : 'Webhook resumed.' });
            await onDone();
          } catch (e) {
            setOutcome({ ok: false, text: errorText(e) });
          } finally {
            setBusy(false);
          }
        }}
      >
        {action === 'pause' ? 'Pause' : 'Resume'}
      </button>
      <OutcomeLine outcome={outcome} />
    </>
  );
}

function CreateWebhook({ onCreated }: { onCreated: () => Promise<void> }) {
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  return (
    <section class="actions" aria-labelledby="create-webhook-title">
      <h2 id="create-webhook-title">New webhook</h2>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const form = e.currentTarget as HTMLFormElement;
          const data = new FormData(form);
          const events = data.getAll('events').map(String);
          if (events.length === 0) {
            setOutcome({ ok: false, text: 'Choose at least one event.' });
            return;
          }
          setBusy(true);
          try {
            const body = { url: String(data.get('url') ?? '').trim(), events, secret: String(data.get('secret') ?? '') };
            await api.post('/webhooks', body, newIdempotencyKey());
            form.reset();
            setOutcome({ ok: true, text: 'Webhook created.' });
            await onCreated();
          } catch (err) {
            setOutcome({ ok: false, text: errorText(err) });
          } finally {
            setBusy(false);
          }
        }}
      >
        <label>
          Webhook URL
          <input name="url" type="url" required placeholder="https://shop.example.com/hooks/payments" />
        </label>
        <label>
          Secret (sent as the Authorization header)
          <input name="secret" type="password" required autoComplete="new-password" />
        </label>
        <fieldset class="events">
          <legend>Events</legend>
          {WEBHOOK_EVENTS.map((event) => (
            <label class="check">
              <input type="checkbox" name="events" value={event} />
              {event}
            </label>
          ))}
        </fieldset>
        <button type="submit" disabled={busy}>
          Create webhook
        </button>
      </form>
      <OutcomeLine outcome={outcome} />
    </section>
  );
}

export function Webhooks() {
  const [page, setPage] = useState(1);
  const list = useApi<PageEnvelope<Webhook>>(`/webhooks?page=${page}&perPage=25`);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const items = list.data?.items;
  return (
    <section aria-labelledby="webhooks-title">
      <h1 id="webhooks-title">Webhooks</h1>
      <OutcomeLine outcome={outcome} />
      <ListState loaded={list} count={items?.length} empty="No webhooks yet." />
      {items && items.length > 0 && (
        <ListTable caption="Webhooks" columns={['URL', 'Events', 'Status', 'Actions']}>
          {items.map((w) => (
            <tr key={w.id} data-webhook={w.id}>
              <td class="reference">
                <a href={`#/webhooks/${encodeURIComponent(w.id)}`}>{w.url}</a>
              </td>
              <td>{w.events.join(', ')}</td>
              <td data-testid="webhook-status">{status(w)}</td>
              <td>
                <PauseResume webhook={w} onDone={list.reload} />
                <ConfirmAction
                  label="Delete"
                  name={`Delete webhook ${w.url}`}
                  question={`Delete the webhook to ${w.url}? It gets no more events.`}
                  run={(key) => api.del(`/webhooks/${encodeURIComponent(w.id)}`, key)}
                  done="Webhook deleted."
                  onDone={list.reload}
                  report={setOutcome}
                />
              </td>
            </tr>
          ))}
        </ListTable>
      )}
      <Pager page={list.data} onPage={setPage} />
      <CreateWebhook onCreated={list.reload} />
    </section>
  );
}

export function WebhookDetail({ id }: { id: string }) {
  const loaded = useApi<{ webhook: Webhook }>(`/webhooks/${encodeURIComponent(id)}`);
  const [page, setPage] = useState(1);
  const deliveries = useApi<PageEnvelope<{ delivery: Delivery }>>(`/webhooks/${encodeURIComponent(id)}/deliveries?page=${page}&perPage=50`);
  if (loaded.notFound) return <NotFound what="Webhook" back="#/webhooks" backLabel="Back to webhooks" />;
  const w = loaded.data?.webhook;
  if (!w) return <ListState loaded={loaded} count={undefined} empty="" />;
  const items = deliveries.data?.items.map((i) => i.delivery);
  const rate = items ? failureRate(items, Date.now()) : null;
  return (
    <section aria-labelledby="webhook-title">
      <p>
        <a href="#/webhooks">Back to webhooks</a>
      </p>
      <h1 id="webhook-title">Webhook</h1>
      <Facts
        rows={[
          ['URL', <span class="reference">{w.url}</span>],
          ['Events', w.events.join(', ')],
          ['Status', status(w)],
          ['Created', when(w.createdAt)],
          [
            'Failure rate, last 7 days',
            <span data-testid="failure-rate">
              {rate ? `${rate.percent} % (${rate.failed} of ${plural(rate.attempts, 'attempt')} on this page of deliveries)` : 'no attempts'}
            </span>,
          ],
        ]}
      />
      <PauseResume webhook={w} onDone={loaded.reload} />
      <h2>Recent deliveries</h2>
      <ListState loaded={deliveries} count={items?.length} empty="No deliveries yet." />
      {items && items.length > 0 && (
        <ListTable caption="Deliveries, newest first" columns={['Created', 'Event', 'State', ['Attempts', 'num'], 'Last attempt']}>
          {items.map((d) => {
            const last = d.attemptLog[d.attemptLog.length - 1];
            return (
              <tr key={d.id}>
                <td>{when(d.createdAt)}</td>
                <td>{d.event}</td>
                <td>
                  <span class={`state state-${d.state}`}>{d.state}</span>
                  {d.nextAttemptAt ? ` next ${when(d.nextAttemptAt)}` : ''}
                </td>
                <td class="num">{d.attempts}</td>
                <td class="reference">
                  {last ? `${when(last.attemptedAt)}: ${last.httpStatus ?? 'no answer'} in ${last.durationMs} ms${last.error ? ` — ${last.error}` : ''}` : ''}
                </td>
              </tr>
            );
          })}
        </ListTable>
      )}
      <Pager page={deliveries.data} onPage={setPage} />
    </section>
  );
}
