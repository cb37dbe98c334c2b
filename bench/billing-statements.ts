/**
 * Lists the SQL statements of N billing charges, from the clock advance that makes their
 * agreements due to the charges settled (the job runner drained, as the service's workers would
 * run it under a backlog: every job claimed), in the order they reach the database, with the
 * counts: what a charge costs, not only how many.
 *
 *   node --import tsx bench/billing-statements.ts [sqlite|postgres] [N]
 */
import { createAgreement, createPlan, DAY_MS, now, startBillingSuite, subscribe } from '../test/billing/support.js';

const kind = (process.argv[2] ?? 'sqlite') as 'postgres' | 'sqlite';
const count = Number(process.argv[3] ?? 1);
const { t, m } = await startBillingSuite(kind);
const plan = await createPlan(m.api);
for (let i = 0; i < count; i++) {
  const { subscriptionId } = await subscribe(t, m);
  await createAgreement(m.api, subscriptionId, plan.id, { nextChargeAt: new Date((await now(t)) + DAY_MS).toISOString() });
}
await t.runtime.runner.drain();
await t.runtime.runner.stop();

const counters = t.runtime.store.counters;
counters.log = [];
counters.start();
await t.runtime.clock.moveTo((await now(t)) + DAY_MS + 60_000);
await t.runtime.runner.drain();
const counts = counters.stop();
for (const statement of counters.log) console.log(`- ${statement.replace(/\s+/g, ' ').slice(0, 180)}`);
const settled = await t.runtime.store.db.selectFrom('billingAgreementCharges').select('state').execute();
console.log(`charges: ${JSON.stringify(settled.map((c) => c.state))}`);
console.log(`${kind}, ${count} charge(s): ${JSON.stringify(counts)}`);
await t.close();
