/**
 * API keys: the public API can create a key (POST /management/api-keys → {name, key}, the key
 * shown once and stored only as a hash); it has no list or revoke yet, so neither has this view.
 */
import { useState } from 'preact/hooks';
import { api, newIdempotencyKey } from './api';
import { errorText, type Outcome, OutcomeLine } from './ui';

export function ApiKeys() {
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null);
  return (
    <section aria-labelledby="keys-title">
      <h1 id="keys-title">API keys</h1>
      <p class="hint">
        A new key is shown once, here, and never again: the service keeps only its hash. Listing and revoking keys are not offered by the API yet.
      </p>
      <form
        class="filters"
        onSubmit={async (e) => {
          e.preventDefault();
          const form = e.currentTarget as HTMLFormElement;
          const name = String(new FormData(form).get('name') ?? '').trim();
          setBusy(true);
          setOutcome(null);
          setCreated(null);
          try {
            setCreated(await api.post<{ name: string; key: string }>('/management/api-keys', { name }, newIdempotencyKey()));
            form.reset();
            setOutcome({ ok: true, text: 'Key created. Copy it now: it is not shown again.' });
          } catch (err) {
            setOutcome({ ok: false, text: errorText(err) });
          } finally {
            setBusy(false);
          }
        }}
      >
        <label>
          Key name
          <input name="name" required maxLength={256} placeholder="Web shop backend" />
        </label>
        <button type="submit" disabled={busy}>
          Create key
        </button>
      </form>
      <OutcomeLine outcome={outcome} />
      {created && (
        <section aria-labelledby="new-key-title" class="actions">
          <h2 id="new-key-title">New key “{created.name}”</h2>
          <label>
            Secret key (shown once)
            <input readOnly value={created.key} size={Math.min(created.key.length, 60)} onFocus={(e) => (e.currentTarget as HTMLInputElement).select()} />
          </label>{' '}
          <button type="button" onClick={() => void navigator.clipboard?.writeText(created.key)}>
            Copy key
          </button>{' '}
          <button type="button" onClick={() => setCreated(null)}>
            Done, hide it
          </button>
        </section>
      )}
    </section>
  );
}
