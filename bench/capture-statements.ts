/**
 * Lists the SQL statements of N captures (POST /transactions/{id}/capture, each on its own MIT
 * authorization, the job runner off as in `npm run bench capture`), in the order they reach the
 * database, with the counts: what a capture costs, not only how many.
 *
 *   node --import tsx bench/capture-statements.ts [sqlite|postgres] [N]
 */
import { mitBody, storedCard } from '../test/online/cit-flows.js';
import { API, startTestRuntime } from '../test/support/harness.js';

const kind = (process.argv[2] ?? 'sqlite') as 'postgres' | 'sqlite';
const count = Number(process.argv[3] ?? 1);
const t = await startTestRuntime(kind, {}, { startWorkers: false });
const m = await t.createMerchant();
const { subscriptionId } = await storedCard(t, m, 'cust-statements');
const ids: string[] = [];
for (let i = 0; i < count; i++) {
  const res = await m.api.post(`${API}/mit`, mitBody(subscriptionId, 'http://localhost:9/callbacks', { reference: `capture-statements-${i}` }));
  if (res.status !== 200) throw new Error(res.text);
  ids.push((res.body as { transaction: { id: string } }).transaction.id);
}
// The authorizations answered (the drive jobs), their callbacks left queued.
await t.runtime.runner.drain();

const counters = t.runtime.store.counters;
counters.log = [];
counters.start();
for (const id of ids) {
  const res = await m.api.post(`${API}/transactions/${id}/capture`, { amount: 1000 });
  if (res.status !== 200 || !(res.body as { success: boolean }).success) throw new Error(res.text);
}
const counts = counters.stop();
for (const statement of counters.log) console.log(`- ${statement.replace(/\s+/g, ' ').slice(0, Number(process.env.WIDTH ?? 200))}`);
console.log(`${kind}, ${count} capture(s): ${JSON.stringify(counts)}`);
await t.close();
