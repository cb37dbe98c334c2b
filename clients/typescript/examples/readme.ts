// The README's example, runnable: PAYMENTS_API_KEY=sk_… node --import tsx clients/typescript/examples/readme.ts
import { createPaymentsClient } from '@payments-service/client';

const api = createPaymentsClient({ baseUrl: process.env.PAYMENTS_URL ?? 'http://127.0.0.1:8080', token: process.env.PAYMENTS_API_KEY });
// Typed body and answer; an Idempotency-Key is generated; 429/503 are retried after Retry-After.
const { data, error } = await api.POST('/public/api/v1/subscriptions/billing/plans', {
  body: { name: 'Monthly box', amount: 4900, currency: 'DKK', maxAttempts: 3, interval: { period: 'MONTH', frequency: 1 } },
});
if (error)
  console.error(error.errorCode, error.message); // the §3 error body, typed
else console.log('plan', data.billingPlan.id, data.billingPlan.amount);
for await (const { transaction } of api.items('/public/api/v1/transactions', { params: { query: { state: 'SUCCESS' } } })) {
  console.log(transaction.id, transaction.amount, transaction.currency); // every page, following nextOffset
}
