import { useState } from 'preact/hooks';
import { AcquirerAgreementPanel } from './acquirer-agreement';
import { api, newIdempotencyKey } from './api';
import { when } from './format';
import { ListTable, useLoad } from './ui';

interface Account {
  id: string;
  name: string;
  email: string;
  status: 'PENDING' | 'ACTIVE' | 'CLOSED';
  currencyCode: string;
  capabilities: { moto: boolean; syncPayout: boolean };
  createdAt: string;
}

const PER_PAGE = 100;
const CAPABILITIES = [
  ['moto', 'MOTO'],
  ['syncPayout', 'Synchronous payouts'],
] as const;

/** Operator: the merchant accounts of this deployment — create, activate, capabilities, acquirer agreement, delete (the partner API). */
export function Accounts() {
  const {
    data: page,
    error,
    setData,
    setError,
    load,
  } = useLoad(async () => {
    const res = await api.get<{ total: number; items: Array<{ account: Account }> }>(`/partner/accounts?perPage=${PER_PAGE}`);
    return { accounts: res.items.map((i) => i.account), total: res.total };
  });
  const accounts = page?.accounts ?? null;
  const total = page?.total ?? 0;
  const [message, setMessage] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  /** The account whose acquirer agreement is open below the list. */
  const [agreementOf, setAgreementOf] = useState<string | null>(null);

  /** One account action at a time; the list is read again after it, and the outcome said in a status line. */
  const act = async (account: Account, done: string, action: () => Promise<unknown>) => {
    setBusy(account.id);
    setMessage(null);
    try {
      await action();
      await load();
      setError(null);
      setMessage(done);
    } catch (e) {
      // The list is read again first (the refused change may have been shown already), then the refusal said.
      await load();
      setError((e as Error).message);
    } finally {
      setBusy(null);
    }
  };
  const path = (a: Account) => `/partner/accounts/${encodeURIComponent(a.id)}`;

  return (
    <section aria-labelledby="accounts-title">
      <h1 id="accounts-title">Accounts</h1>
      <CreateAccount
        onCreated={async (a) => {
          setMessage(`Account ${a.name} created (${a.status}).`);
          await load();
        }}
      />
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {message && <p role="status">{message}</p>}
      {!accounts && !error && <p aria-busy="true">Loading…</p>}
      {accounts && accounts.length === 0 && <p class="empty">No accounts yet.</p>}
      {accounts && accounts.length > 0 && (
        <ListTable columns={['Name', 'Email', 'Status', 'Currency', 'Capabilities', 'Created', 'Actions']}>
          {accounts.map((a) => (
            <tr key={a.id} data-account={a.id}>
              <td>{a.name}</td>
              <td>{a.email}</td>
              <td>{a.status}</td>
              <td>{a.currencyCode}</td>
              <td>
                {CAPABILITIES.map(([field, label]) => (
                  <label key={field} class="inline">
                    <input
                      type="checkbox"
                      checked={a.capabilities[field]}
                      disabled={a.status === 'CLOSED' || busy === a.id}
                      aria-label={`${label} for ${a.name}`}
                      onChange={(e) => {
                        const on = (e.currentTarget as HTMLInputElement).checked;
                        // Shown at once; the list read after the change (or after a refusal) has the last word.
                        setData({ total, accounts: accounts.map((x) => (x.id === a.id ? { ...x, capabilities: { ...x.capabilities, [field]: on } } : x)) });
                        void act(a, `${label} ${on ? 'granted to' : 'withdrawn from'} ${a.name}.`, () => api.patch(`${path(a)}/capabilities`, { [field]: on }));
                      }}
                    />
                    {label}
                  </label>
                ))}
              </td>
              <td>{when(a.createdAt)}</td>
              <td>
                <div class="row-actions">
                  <button
                    type="button"
                    aria-label={`Acquirer agreement of ${a.name}`}
                    aria-expanded={agreementOf === a.id}
                    onClick={() => setAgreementOf(agreementOf === a.id ? null : a.id)}
                  >
                    Acquirer
                  </button>
                  {a.status === 'PENDING' && (
                    <button
                      type="button"
                      disabled={busy === a.id}
                      aria-label={`Activate ${a.name}`}
                      onClick={() => void act(a, `${a.name} activated.`, () => api.patch(`${path(a)}/activate`))}
                    >
                      Activate
                    </button>
                  )}
                  {a.status !== 'CLOSED' && (
                    <button
                      type="button"
                      class="danger"
                      disabled={busy === a.id}
                      aria-label={`Delete ${a.name}`}
                      onClick={() => {
                        if (!confirm(`Delete the account ${a.name}? Its API keys and access tokens stop working at once.`)) return;
                        void act(a, `${a.name} deleted.`, () => api.del(path(a)));
                      }}
                    >
                      Delete
                    </button>
                  )}
                </div>
              </td>
            </tr>
          ))}
        </ListTable>
      )}
      {accounts?.some((a) => a.id === agreementOf) && (
        <AcquirerAgreementPanel key={agreementOf} account={accounts.find((a) => a.id === agreementOf)!} onClose={() => setAgreementOf(null)} />
      )}
      {accounts && total > accounts.length && (
        <p class="empty">
          Showing the first {accounts.length} of {total} accounts.
        </p>
      )}
    </section>
  );
}

interface CreateFields {
  name: string;
  email: string;
  currencyCode: string;
  timezone: string;
  domain: string;
}

const EMPTY: CreateFields = { name: '', email: '', currencyCode: 'DKK', timezone: 'Europe/Copenhagen', domain: '' };
const FIELDS: Array<[keyof CreateFields, string, string]> = [
  ['name', 'Name', 'text'],
  ['email', 'Email', 'email'],
  ['currencyCode', 'Currency', 'text'],
  ['timezone', 'Time zone', 'text'],
  ['domain', 'Domain', 'text'],
];

/** The create form: one Idempotency-Key per filled-in form, so that a retried submit creates one account. */
function CreateAccount({ onCreated }: { onCreated: (account: Account) => Promise<void> }) {
  const [fields, setFields] = useState<CreateFields>(EMPTY);
  const [idempotencyKey, setIdempotencyKey] = useState(newIdempotencyKey);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <details class="create">
      <summary>New account</summary>
      <form
        class="filters"
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          try {
            const { account } = await api.post<{ account: Account }>(
              '/partner/accounts',
              { ...fields, currencyCode: fields.currencyCode.toUpperCase() },
              idempotencyKey,
            );
            setFields(EMPTY);
            setIdempotencyKey(newIdempotencyKey());
            setError(null);
            await onCreated(account);
          } catch (err) {
            setError((err as Error).message);
          } finally {
            setBusy(false);
          }
        }}
      >
        {FIELDS.map(([field, label, type]) => (
          <label key={field}>
            {label}
            <input
              type={type}
              required
              value={fields[field]}
              onInput={(e) => {
                setFields({ ...fields, [field]: (e.currentTarget as HTMLInputElement).value });
                setIdempotencyKey(newIdempotencyKey());
              }}
            />
          </label>
        ))}
        <button type="submit" disabled={busy}>
          Create account
        </button>
        {error && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
      </form>
    </details>
  );
}
