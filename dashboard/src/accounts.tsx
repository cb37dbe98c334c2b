import { useEffect, useState } from 'preact/hooks';
import { api } from './api';
import { when } from './format';

interface Account {
  id: string;
  name: string;
  email: string;
  status: string;
  currencyCode: string;
  createdAt: string;
}

/** Operator: the accounts of this deployment (first cut; jobs and dead-job retry need an API first). */
export function Accounts() {
  const [accounts, setAccounts] = useState<Account[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api.get<{ items: Array<{ account: Account } | Account> }>('/partner/accounts?perPage=100').then(
      (p) => setAccounts(p.items.map((i) => ('account' in i ? i.account : i))),
      (e: Error) => setError(e.message),
    );
  }, []);
  return (
    <section aria-labelledby="accounts-title">
      <h1 id="accounts-title">Accounts</h1>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {!accounts && !error && <p aria-busy="true">Loading…</p>}
      {accounts && accounts.length === 0 && <p class="empty">No accounts yet.</p>}
      {accounts && accounts.length > 0 && (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Email</th>
                <th scope="col">Status</th>
                <th scope="col">Currency</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {accounts.map((a) => (
                <tr key={a.id}>
                  <td>{a.name}</td>
                  <td>{a.email}</td>
                  <td>{a.status}</td>
                  <td>{a.currencyCode}</td>
                  <td>{when(a.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
