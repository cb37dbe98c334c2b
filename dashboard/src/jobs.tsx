import { useState } from 'preact/hooks';
import { api } from './api';
import { when } from './format';
import { ListTable, useLoad } from './ui';

interface JobsView {
  counts: Array<{ kind: string; state: string; count: number }>;
  dead: Array<{ id: string; kind: string; attempts: number; maxAttempts: number; lastError: string | null; createdAt: string; updatedAt: string }>;
}

const PATH = '/dashboard/api/operator/jobs';

/** Operator: jobs by kind and state, dead jobs with retry. */
export function Jobs() {
  const { data: view, error, setError, load } = useLoad(() => api.getRoot<JobsView>(PATH));
  const [message, setMessage] = useState<string | null>(null);

  return (
    <section aria-labelledby="jobs-title">
      <h1 id="jobs-title">Jobs</h1>
      <button type="button" onClick={() => void load()}>
        Refresh
      </button>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {message && <p role="status">{message}</p>}
      {!view && !error && <p aria-busy="true">Loading…</p>}
      {view && (
        <>
          <h2>By kind and state</h2>
          {view.counts.length === 0 ? (
            <p class="empty">No pending, running or dead jobs.</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Kind</th>
                  <th scope="col">State</th>
                  <th scope="col" class="num">
                    Count
                  </th>
                </tr>
              </thead>
              <tbody>
                {view.counts.map((c) => (
                  <tr key={`${c.kind}/${c.state}`}>
                    <td>{c.kind}</td>
                    <td>{c.state}</td>
                    <td class="num">{c.count}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <h2>Dead jobs</h2>
          {view.dead.length === 0 ? (
            <p class="empty">No dead jobs.</p>
          ) : (
            <ListTable columns={['Kind', 'Attempts', 'Last error', 'Died', 'Action']}>
              {view.dead.map((j) => (
                <tr key={j.id}>
                  <td>{j.kind}</td>
                  <td>
                    {j.attempts}/{j.maxAttempts}
                  </td>
                  <td class="reference">{j.lastError ?? ''}</td>
                  <td>{when(j.updatedAt)}</td>
                  <td>
                    <button
                      type="button"
                      aria-label={`Retry job ${j.id}`}
                      onClick={async () => {
                        if (!confirm(`Queue the ${j.kind} job again with fresh attempts?`)) return;
                        try {
                          await api.postRoot(`${PATH}/${encodeURIComponent(j.id)}/retry`);
                          setMessage(`Job ${j.id} queued again.`);
                          await load();
                        } catch (e) {
                          setError((e as Error).message);
                        }
                      }}
                    >
                      Retry
                    </button>
                  </td>
                </tr>
              ))}
            </ListTable>
          )}
        </>
      )}
    </section>
  );
}
