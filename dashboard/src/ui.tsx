/**
 * Building blocks shared by the dashboard views: loading a resource of the public API with its
 * loading / error / not-found states (and any other read, for the operator views), the page-envelope
 * pager, a list table, an "any / …" select filter, a labelled fact list and the two-step confirmation
 * (one Idempotency-Key per confirmation, so a retried click never acts twice).
 */
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, ApiError, newIdempotencyKey } from './api';
import type { PaymentStatus } from './payment-status';
import type { PageEnvelope } from './types';

/** A payment's derived status as a coloured badge (colour by meaning: green only for money kept); the note as its title. */
export function StatusBadge({ status }: { status: PaymentStatus }) {
  return (
    <span class={`status status-${status.tone}`} data-status={status.key} title={status.note ?? undefined}>
      {status.label}
    </span>
  );
}

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

export interface LoadedView<T> {
  data: T | null;
  error: string | null;
  /** Shows a change at once (e.g. before the call that makes it); the next `load` has the last word. */
  setData: (data: T) => void;
  setError: (error: string | null) => void;
  /** Reads again; a failure is kept in `error` (the last data stays). */
  load: () => Promise<void>;
}

/**
 * Loads once on mount with `read` (any call, e.g. an operator route outside the public API) and
 * keeps its last result and its last error message. `read` is taken from the first render: it must
 * not depend on props or state.
 */
export function useLoad<T>(read: () => Promise<T>): LoadedView<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(async () => {
    try {
      setData(await read());
      setError(null);
    } catch (e) {
      setError((e as Error).message);
    }
  }, []);
  useEffect(() => {
    void load();
  }, [load]);
  return { data, error, setData, setError, load };
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

/** A column heading of a `ListTable`: its text, or [text, class] (e.g. "num" for a right-aligned number). */
export type Column = string | [label: string, className: string];

/**
 * A scrollable table of rows: an optional caption for screen readers, one heading row and the
 * rows given as children. `busy` (when given) marks the table aria-busy while a new page loads.
 */
export function ListTable({ caption, columns, busy, children }: { caption?: string; columns: Column[]; busy?: boolean; children: ComponentChildren }) {
  return (
    <div class="table-wrap">
      <table aria-busy={busy === undefined ? undefined : busy ? 'true' : 'false'}>
        {caption !== undefined && <caption class="sr-only">{caption}</caption>}
        <thead>
          <tr>
            {columns.map((c) =>
              typeof c === 'string' ? (
                <th scope="col">{c}</th>
              ) : (
                <th scope="col" class={c[1]}>
                  {c[0]}
                </th>
              ),
            )}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/**
 * A labelled select of "any" (the empty value) and `options`: named for a filter form, or
 * controlled with `value` / `onChange`.
 */
export function SelectFilter({
  label,
  name,
  options,
  value,
  onChange,
}: {
  label: string;
  name?: string;
  options: readonly string[];
  value?: string;
  onChange?: (value: string) => void;
}) {
  return (
    <label>
      {label}
      <select name={name} value={value} onChange={onChange && ((e) => onChange((e.currentTarget as HTMLSelectElement).value))}>
        <option value="">any</option>
        {options.map((o) => (
          <option value={o}>{o}</option>
        ))}
      </select>
    </label>
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
