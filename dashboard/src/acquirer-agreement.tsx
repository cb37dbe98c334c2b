/**
 * Operator: an account's acquirer agreement (INTERFACE §12.1) — shown without its API key (the
 * service never returns it), set (a PUT replaces it: a clearhaus key is typed again every time) and
 * removed, through the partner API like any integrator.
 */
import { useState } from 'preact/hooks';
import { api, ApiError, newIdempotencyKey } from './api';
import { when } from './format';
import { ConfirmAction, errorText, Facts, type Outcome, OutcomeLine, useApi } from './ui';

interface AcquirerAgreement {
  acquirer: 'sandbox' | 'clearhaus';
  mcc: string;
  textOnStatement: string | null;
  createdAt: string;
  updatedAt: string;
}

interface Fields {
  acquirer: 'sandbox' | 'clearhaus';
  apiKey: string;
  mcc: string;
  textOnStatement: string;
}

const fieldsOf = (agreement: AcquirerAgreement | null): Fields => ({
  acquirer: agreement?.acquirer ?? 'sandbox',
  apiKey: '',
  mcc: agreement?.mcc ?? '',
  textOnStatement: agreement?.textOnStatement ?? '',
});

/** The body of the PUT: only the fields the acquirer takes; empty inputs are left out (the service's defaults). */
function bodyOf(fields: Fields): Record<string, string> {
  const body: Record<string, string> = { acquirer: fields.acquirer };
  if (fields.acquirer === 'clearhaus') body.apiKey = fields.apiKey.trim();
  if (fields.mcc.trim()) body.mcc = fields.mcc.trim();
  if (fields.textOnStatement) body.textOnStatement = fields.textOnStatement;
  return body;
}

export function AcquirerAgreementPanel({ account, onClose }: { account: { id: string; name: string; status: string }; onClose: () => void }) {
  const path = `/partner/accounts/${encodeURIComponent(account.id)}/acquirer-agreement`;
  const [version, setVersion] = useState(0);
  const loaded = useApi<{ acquirerAgreement: AcquirerAgreement }>(path, version);
  const agreement = loaded.notFound ? null : (loaded.data?.acquirerAgreement ?? null);
  const [outcome, setOutcome] = useState<Outcome | null>(null);

  return (
    <section class="acquirer-agreement" aria-labelledby="acquirer-agreement-title" data-testid="acquirer-agreement">
      <h2 id="acquirer-agreement-title">Acquirer agreement of {account.name}</h2>
      {loaded.loading && !loaded.data && !loaded.notFound && <p aria-busy="true">Loading…</p>}
      {loaded.error && !loaded.notFound && (
        <p role="alert" class="error">
          {loaded.error}
        </p>
      )}
      {loaded.notFound && (
        <p class="empty" data-testid="no-acquirer-agreement">
          No acquirer agreement: card payments use the sandbox while PAYMENTS_SANDBOX=1, and fail with MISSING_ACQUIRER_AGREEMENT otherwise.
        </p>
      )}
      {agreement && (
        <Facts
          testId="acquirer-agreement-facts"
          rows={[
            ['Acquirer', agreement.acquirer],
            ['API key', agreement.acquirer === 'clearhaus' ? 'set (never shown)' : 'none'],
            ['MCC', agreement.mcc],
            ['Text on statement', agreement.textOnStatement],
            ['Created', when(agreement.createdAt)],
            ['Updated', when(agreement.updatedAt)],
          ]}
        />
      )}
      <OutcomeLine outcome={outcome} />
      {account.status !== 'CLOSED' && (loaded.data || loaded.notFound) && (
        <AgreementForm
          key={agreement?.updatedAt ?? 'none'}
          path={path}
          agreement={agreement}
          onSaved={(saved) => {
            setOutcome({ ok: true, text: `Acquirer agreement of ${account.name} saved: ${saved.acquirer}, MCC ${saved.mcc}.` });
            setVersion(version + 1);
          }}
        />
      )}
      <div class="row-actions">
        {agreement && (
          <ConfirmAction
            label="Remove agreement"
            name={`Remove the acquirer agreement of ${account.name}`}
            question={`Remove the acquirer agreement of ${account.name}? Payments already authorized keep it for their captures and refunds.`}
            run={(key) => api.del(path, key)}
            done={`Acquirer agreement of ${account.name} removed.`}
            report={setOutcome}
            onDone={() => setVersion(version + 1)}
          />
        )}
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
    </section>
  );
}

/** The PUT form: one Idempotency-Key per filled-in form, so that a retried submit writes one agreement. */
function AgreementForm({ path, agreement, onSaved }: { path: string; agreement: AcquirerAgreement | null; onSaved: (saved: AcquirerAgreement) => void }) {
  const [fields, setFields] = useState<Fields>(() => fieldsOf(agreement));
  const [idempotencyKey, setIdempotencyKey] = useState(newIdempotencyKey);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const set = (change: Partial<Fields>) => {
    setFields({ ...fields, ...change });
    setIdempotencyKey(newIdempotencyKey());
  };
  const clearhaus = fields.acquirer === 'clearhaus';
  return (
    <form
      class="filters"
      aria-label="Set the acquirer agreement"
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        try {
          const { acquirerAgreement } = await api.put<{ acquirerAgreement: AcquirerAgreement }>(path, bodyOf(fields), idempotencyKey);
          // The key leaves the page's state at once; the next save asks for it again.
          setFields({ ...fields, apiKey: '' });
          setIdempotencyKey(newIdempotencyKey());
          setError(null);
          onSaved(acquirerAgreement);
        } catch (err) {
          setError(err instanceof ApiError ? errorText(err) : (err as Error).message);
        } finally {
          setBusy(false);
        }
      }}
    >
      <label>
        Acquirer
        <select
          aria-label="Acquirer"
          value={fields.acquirer}
          onChange={(e) => set({ acquirer: (e.currentTarget as HTMLSelectElement).value as Fields['acquirer'] })}
        >
          <option value="sandbox">sandbox</option>
          <option value="clearhaus">clearhaus</option>
        </select>
      </label>
      {clearhaus && (
        <label>
          API key
          <input
            type="password"
            name="acquirer-api-key"
            autoComplete="new-password"
            spellcheck={false}
            required
            placeholder={agreement?.acquirer === 'clearhaus' ? 'type it again to save' : 'the Clearhaus API key (a UUID)'}
            value={fields.apiKey}
            onInput={(e) => set({ apiKey: (e.currentTarget as HTMLInputElement).value })}
          />
        </label>
      )}
      <label>
        MCC
        <input
          type="text"
          inputMode="numeric"
          maxLength={4}
          required={clearhaus}
          placeholder={clearhaus ? '4 digits' : '5999'}
          value={fields.mcc}
          onInput={(e) => set({ mcc: (e.currentTarget as HTMLInputElement).value })}
        />
      </label>
      <label>
        Text on statement
        <input
          type="text"
          maxLength={22}
          placeholder="optional, 2–22 characters"
          value={fields.textOnStatement}
          onInput={(e) => set({ textOnStatement: (e.currentTarget as HTMLInputElement).value })}
        />
      </label>
      <button type="submit" disabled={busy}>
        Save agreement
      </button>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
    </form>
  );
}
