/**
 * Points of sale and terminals (read only: the API's management calls that create them are for
 * integrations): the points of sale, one with its hosted-payment defaults and its terminals, and
 * one terminal with its device.
 */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { plural, when } from './format';
import type { Device, HostedConfiguration, PageEnvelope, PointOfSale, Terminal } from './types';
import { Facts, ListState, ListTable, NotFound, Pager, useApi } from './ui';

type PosItem = { pointOfSale: PointOfSale; hostedConfiguration: HostedConfiguration };
type Row = [string, ComponentChildren];

/**
 * A credential shown masked until asked for: "Reveal" shows it (and "Hide" masks it again), so it
 * is not on screen — or in a screenshot — by default.
 */
export function Secret({ label, value }: { label: string; value: string }) {
  const [shown, setShown] = useState(false);
  return (
    <span class="secret">
      <code data-testid={`secret-${label}`} aria-label={shown ? undefined : `${label} (hidden)`}>
        {shown ? value : '•'.repeat(Math.min(24, Math.max(8, value.length)))}
      </code>{' '}
      <button type="button" aria-pressed={shown ? 'true' : 'false'} aria-label={`${shown ? 'Hide' : 'Reveal'} ${label}`} onClick={() => setShown(!shown)}>
        {shown ? 'Hide' : 'Reveal'}
      </button>
    </span>
  );
}

/** The approved-domain rule, in words, for `domain`. */
function DomainRule({ domain }: { domain: ComponentChildren }) {
  return (
    <p class="hint" data-testid="domain-rule">
      Notification (callback) URLs, webhook URLs and the success and failure URLs of its payments must be http or https URLs on the approved domain {domain} or
      a sub-domain of it (e.g. <code>https://shop.{domain}/…</code>); any other address is refused (422). A new domain needs a point of sale created with it.
    </p>
  );
}
type TerminalItem = { terminal: Terminal; pointOfSale: PointOfSale; device: Device | null };

function TerminalTable({ items }: { items: TerminalItem[] }) {
  return (
    <ListTable caption="Terminals" columns={['Terminal', 'Name', 'Fallback', 'Device', 'Created']}>
      {items.map(({ terminal: t, device }) => (
        <tr key={t.id}>
          <td>
            <a href={`#/terminals/${encodeURIComponent(t.id)}`}>{t.id}</a>
          </td>
          <td class="reference">{t.name ?? ''}</td>
          <td>{t.fallback ? 'yes' : 'no'}</td>
          <td class="reference">{device?.description ?? ''}</td>
          <td>{when(t.createdAt)}</td>
        </tr>
      ))}
    </ListTable>
  );
}

export function PointsOfSale() {
  const [page, setPage] = useState(1);
  const list = useApi<PageEnvelope<PosItem>>(`/management/point-of-sales?page=${page}&perPage=25`);
  const items = list.data?.items;
  return (
    <section aria-labelledby="pos-title">
      <h1 id="pos-title">Points of sale and terminals</h1>
      <p class="hint">
        Each point of sale has an approved domain: the notification, webhook and redirect URLs of its payments must be on that domain or a sub-domain of it.
      </p>
      <ListState loaded={list} count={items?.length} empty="No points of sale yet." />
      {items && items.length > 0 && (
        <ListTable caption="Points of sale" columns={['Name', 'Type', 'Approved domain', 'Created']}>
          {items.map(({ pointOfSale: p }) => (
            <tr key={p.id}>
              <td class="reference">
                <a href={`#/points-of-sale/${encodeURIComponent(p.id)}`}>{p.name}</a>
              </td>
              <td>{p.type}</td>
              <td class="reference">{p.domain}</td>
              <td>{when(p.createdAt)}</td>
            </tr>
          ))}
        </ListTable>
      )}
      <Pager page={list.data} onPage={setPage} />
    </section>
  );
}

export function PointOfSaleDetail({ id }: { id: string }) {
  const loaded = useApi<PosItem>(`/management/point-of-sales/${encodeURIComponent(id)}`);
  const physical = loaded.data?.pointOfSale.type === 'PHYSICAL';
  const terminals = useApi<PageEnvelope<TerminalItem>>(physical ? `/terminals?pointOfSaleId=${encodeURIComponent(id)}&perPage=100` : null);
  if (loaded.notFound) return <NotFound what="Point of sale" back="#/points-of-sale" backLabel="Back to points of sale" />;
  if (!loaded.data) return <ListState loaded={loaded} count={undefined} empty="" />;
  const { pointOfSale: p, hostedConfiguration: c } = loaded.data;
  return (
    <section aria-labelledby="pos-detail-title">
      <p>
        <a href="#/points-of-sale">Back to points of sale</a>
      </p>
      <h1 id="pos-detail-title">Point of sale {p.name}</h1>
      <Facts
        rows={[
          ['Id', p.id],
          ['Type', p.type],
          ['Approved domain', <span class="reference">{p.domain}</span>],
          ['Statement descriptor', p.descriptor],
          ['Created', when(p.createdAt)],
          ['Updated', when(p.updatedAt)],
        ]}
      />
      <DomainRule domain={<strong class="reference">{p.domain}</strong>} />
      {(p.webhookAuthentication || p.signingSecret) && (
        <>
          <h2>Callbacks</h2>
          <p class="hint">
            Every callback of its payments carries the Authorization header below, so that your endpoint can tell it comes from this service
            {p.signingSecret ? '; it is also signed with the signing secret (Standard Webhooks headers webhook-id, webhook-timestamp, webhook-signature)' : ''}.
          </p>
          <Facts
            testId="callback-credentials"
            rows={[
              ...(p.webhookAuthentication
                ? ([['Authorization header', <Secret label="Authorization header" value={p.webhookAuthentication} />]] as Row[])
                : []),
              ...(p.signingSecret ? ([['Signing secret', <Secret label="Signing secret" value={p.signingSecret} />]] as Row[]) : []),
            ]}
          />
        </>
      )}
      <h2>Hosted payment defaults</h2>
      <Facts
        rows={[
          ['Instant capture', c.instantCapture],
          ['SCA mode', c.scaMode],
          ['Session timeout', plural(c.timeout, 'minute')],
          ['Payment attempts per session', c.maxAttempts],
          ['Notification URL', <span class="reference">{c.notificationUrl ?? ''}</span>],
          ['Success URL', <span class="reference">{c.successUrl ?? ''}</span>],
          ['Failure URL', <span class="reference">{c.failureUrl ?? ''}</span>],
        ]}
      />
      {physical && (
        <>
          <h2>Terminals</h2>
          <ListState loaded={terminals} count={terminals.data?.items.length} empty="No terminals." />
          {terminals.data && terminals.data.items.length > 0 && <TerminalTable items={terminals.data.items} />}
        </>
      )}
    </section>
  );
}

export function TerminalDetail({ id }: { id: string }) {
  const loaded = useApi<TerminalItem>(`/terminals/${encodeURIComponent(id)}`);
  if (loaded.notFound) return <NotFound what="Terminal" back="#/points-of-sale" backLabel="Back to points of sale" />;
  if (!loaded.data) return <ListState loaded={loaded} count={undefined} empty="" />;
  const { terminal: t, pointOfSale: p, device } = loaded.data;
  return (
    <section aria-labelledby="terminal-title">
      <p>
        <a href={`#/points-of-sale/${encodeURIComponent(p.id)}`}>Back to {p.name}</a>
      </p>
      <h1 id="terminal-title">Terminal {t.name ?? t.id}</h1>
      <Facts
        rows={[
          ['Id', t.id],
          ['Point of sale', p.name],
          ['Fallback terminal', t.fallback ? 'yes' : 'no'],
          ['External id', t.externalId],
          ['Device', device ? `${device.description} (${device.id})` : null],
          ['Created', when(t.createdAt)],
        ]}
      />
    </section>
  );
}
