/**
 * Lists the SQL statements of N MITs from request to delivered callback, in the order they reach
 * the database, with the counts — which statements a payment costs, not only how many. The job
 * runner runs as in the service (its idle polls, should one fall in the run, are counted too).
 *
 *   node --import tsx bench/mit-statements.ts [sqlite|postgres] [N] [together]
 *
 * `together`: the N requests are sent at once (what joins under load), not one after another.
 */
import { mitBody, storedCard } from '../test/online/cit-flows.js';
import { startReceiver, waitFor } from '../test/online/helpers.js';
import { API, startTestRuntime } from '../test/support/harness.js';

const kind = (process.argv[2] ?? 'sqlite') as 'postgres' | 'sqlite';
const count = Number(process.argv[3] ?? 1);
const together = process.argv[4] === 'together';
const t = await startTestRuntime(kind, {}, { startWorkers: false });
const m = await t.createMerchant();
const rx = await startReceiver();
t.runtime.runner.start();
const { subscriptionId } = await storedCard(t, m, 'cust-statements');
// The runner idle, its last claim behind it.
await new Promise((r) => setTimeout(r, 200));

const path = rx.newPath('statements');
const counters = t.runtime.store.counters;
counters.log = [];
counters.start();
const send = async (i: number) => {
  const res = await m.api.post(`${API}/mit`, mitBody(subscriptionId, rx.url(path), { reference: `statements-${i}` }));
  if (res.status !== 200) throw new Error(res.text);
};
if (together) await Promise.all(Array.from({ length: count }, (_, i) => send(i)));
else for (let i = 0; i < count; i++) await send(i);
await waitFor(async () => rx.at(path).length >= count, 'every callback');
// The callback's own commit lands after the receiver has answered.
await new Promise((r) => setTimeout(r, 50));
const counts = counters.stop();
await t.runtime.runner.stop();
for (const statement of counters.log) console.log(`- ${statement.replace(/\s+/g, ' ').slice(0, 200)}`);
console.log(`${kind}, ${count} MIT(s)${together ? ' sent together' : ''}: ${JSON.stringify(counts)}`);
await rx.close();
await t.close();
