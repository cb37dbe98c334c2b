/**
 * Building blocks shared by the merchant views: loading a resource of the public API with its
 * loading / error / not-found states, the page-envelope pager, a labelled fact list and the
 * two-step confirmation (one Idempotency-Key per confirmation, so a retried click never acts twice).
 */
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, ApiError, newIdempotencyKey } from './api';
import type { PageEnvelope } from './types';

/** An API error as one readable line, with the fields a 422 names. */
export function errorText(e: unknown): string {
  if (!(e instanceof ApiError)) return (e as Error).message;
  if (!e.fields) return e.message;
  const fields = Object.entries(e.fields)
    .map(([field, messages]) => `${field}: ${messages.join(', ')}`)
    .join('; ');
  return `${e.message} ${fields}`;
}

export interface Loaded<T> {
  data: T | null;
  error: string | null;
  notFound: boolean;
  loading: boolean;
  reload: () => Promise<void>;
}

/** GET `path` of the public API (null: nothing to load yet); reloads when the path or `version` changes. */
export function useApi<T>(path: string | null, version = 0): Loaded<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notFound, setNotFound] = useState(false);
  const [loading, setLoading] = useState(path !== null);
  const reload = useCallback(async () => {
    if (path === null) return;
    setLoading(true);
    try {
      setData(await api.get<T>(path));
      setError(null);
      setNotFound(false);
    } catch (e) {
      setNotFound(e instanceof ApiError && e.status === 404);
      setError(errorText(e));
    } finally {
      setLoading(false);
    }
  }, [path, version]);
  useEffect(() => {
    void reload();
  }, [reload]);
  return { data, error, notFound, loading, reload };
}

/** Loading, error and empty states of a list, announced to screen readers. */
export function ListState({ loaded, count, empty }: { loaded: Loaded<unknown>; count: number | undefined; empty: string }) {
  return (
    <div aria-live="polite">
      {loaded.error && (
        <p role="alert" class="error">
          {loaded.error}
        </p>
      )}
      {loaded.loading && !loaded.data && <p aria-busy="true">Loading…</p>}
      {loaded.data && count === 0 && <p class="empty">{empty}</p>}
    </div>
  );
}

/** Previous / next page of a page envelope, with "page x of y". */
export function Pager({ page, onPage }: { page: PageEnvelope<unknown> | null; onPage: (n: number) => void }) {
  if (!page || page.total === 0) return null;
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={page.previousPage === null} onClick={() => page.previousPage && onPage(page.previousPage)}>
        Previous page
      </button>
      <span>
        Page {page.page} of {page.lastPage} ({page.total} in all)
      </span>
      <button type="button" disabled={page.nextPage === null} onClick={() => page.nextPage && onPage(page.nextPage)}>
        Next page
      </button>
    </nav>
  );
}

/** A definition list of label → text; empty values are shown as "—". */
export function Facts({ rows, testId }: { rows: Array<[string, ComponentChildren]>; testId?: string }) {
  return (
    <dl class="facts" data-testid={testId}>
      {rows.map(([label, value]) => (
        <>
          <dt>{label}</dt>
          <dd>{value === null || value === undefined || value === '' ? '—' : value}</dd>
        </>
      ))}
    </dl>
  );
}

export interface Outcome {
  ok: boolean;
  text: string;
}

/** The result line of an action: a polite status on success, an alert on failure. */
export function OutcomeLine({ outcome }: { outcome: Outcome | null }) {
  return (
    <div aria-live="polite">
      {outcome && (
        <p role={outcome.ok ? 'status' : 'alert'} class={outcome.ok ? 'ok' : 'error'}>
          {outcome.text}
        </p>
      )}
    </div>
  );
}

/**
 * A state-changing action behind a confirmation: the button opens "question? Confirm / Cancel";
 * the Idempotency-Key is drawn when the confirmation opens, so a retry of the same confirmation
 * replays instead of acting twice.
 */
export function ConfirmAction({
  label,
  question,
  run,
  done,
  onDone,
  report,
  name,
}: {
  label: string;
  question: string;
  run: (idempotencyKey: string) => Promise<unknown>;
  done: string;
  onDone?: () => void | Promise<void>;
  /** Where the result goes when this button may unmount on success (its row or section changes): the parent shows it. */
  report?: (outcome: Outcome | null) => void;
  /** The button's accessible name when its short visible label needs context ("Delete" → "Delete webhook https://…"). */
  name?: string;
}) {
  const [key, setKey] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [localOutcome, setLocalOutcome] = useState<Outcome | null>(null);
  const setOutcome = report ?? setLocalOutcome;
  return (
    <div class="confirm-action">
      {key === null ? (
        <button
          type="button"
          aria-label={name}
          onClick={() => {
            setOutcome(null);
            setKey(newIdempotencyKey());
          }}
        >
          {label}
        </button>
      ) : (
        <div role="group" aria-label={`Confirm: ${name ?? label}`}>
          <p>{question}</p>
          <button
            type="button"
            aria-label={name && `Confirm: ${name}`}
            disabled={busy}
            onClick={async () => {
              setBusy(true);
              try {
                await run(key);
                setKey(null);
                setOutcome({ ok: true, text: done });
                await onDone?.();
              } catch (e) {
                setOutcome({ ok: false, text: errorText(e) });
              } finally {
                setBusy(false);
              }
            }}
          >
            Confirm: {label}
          </button>{' '}
          <button type="button" onClick={() => setKey(null)}>
            Cancel
          </button>
        </div>
      )}
      {!report && <OutcomeLine outcome={localOutcome} />}
    </div>
  );
}

/** The not-found page of a detail view: nothing of the resource is shown. */
export function NotFound({ what, back, backLabel }: { what: string; back: string; backLabel: string }) {
  return (
    <section aria-labelledby="not-found-title">
      <h1 id="not-found-title">{what} not found</h1>
      <p>
        It does not exist or belongs to another account. <a href={back}>{backLabel}</a>
      </p>
    </section>
  );
}

/** A query string from non-empty form fields. */
export function formQuery(form: HTMLFormElement, names: readonly string[]): URLSearchParams {
  const data = new FormData(form);
  const q = new URLSearchParams();
  for (const name of names) {
    const v = String(data.get(name) ?? '').trim();
    if (v) q.set(name, v);
  }
  return q;
}
