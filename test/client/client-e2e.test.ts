/**
 * The typed client (clients/typescript) against a running service over real HTTP, on both stores:
 * one flow per group — CIT + MIT + capture + refund; billing (plan, agreement); webhooks (create,
 * list deliveries); settlements (sandbox run, list transfers) — plus the cross-cutting behaviour:
 * an Idempotency-Key on every mutating call (generated, or the caller's), errors as typed values,
 * and the cursor and page iterators.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createPaymentsClient, PaymentsApiError, type ApiError, type PaymentsClient } from '@payments-service/client';
import { startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { startReceiver, waitFor } from '../online/helpers.js';

const V1 = '/public/api/v1';
const VISA = { number: '4111111111111111', expiryMonth: 12, expiryYear: 2030, cvc: '123', holderName: 'Test Holder' };

for (const kind of await availableStores()) {
  describe(`typed client end to end (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    let api: PaymentsClient;
    let operator: PaymentsClient;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    /** Every request the merchant client sent: method, path and its Idempotency-Key. */
    const sent: Array<{ method: string; path: string; key: string | null }> = [];
    let subscriptionId = '';
    let webhookId = '';

    before(async () => {
      t = await startTestRuntime(kind);
      await t.runtime.app.listen({ port: 0, host: '127.0.0.1' });
      const baseUrl = `http://127.0.0.1:${(t.runtime.app.server.address() as AddressInfo).port}`;
      m = await t.createMerchant({ physical: false });
      receiver = await startReceiver();
      api = createPaymentsClient({
        baseUrl,
        token: m.token,
        fetch: (request) => {
          sent.push({ method: request.method, path: new URL(request.url).pathname, key: request.headers.get('idempotency-key') });
          return fetch(request);
        },
      });
      operator = createPaymentsClient({ baseUrl, token: t.operatorKey });
    });
    after(async () => {
      await receiver?.close();
      await t?.close();
    });

    test('webhooks: create one, list it with the page iterator', async () => {
      const { data, error } = await api.POST(`${V1}/webhooks`, {
        body: { url: receiver.url('/webhook'), events: ['transaction.success.v1', 'transaction.captured.v1'], secret: 'whsec-client-e2e' },
      });
      assert.equal(error, undefined, JSON.stringify(error));
      webhookId = data!.webhook.id;
      const listed = [];
      for await (const item of api.items(`${V1}/webhooks`)) listed.push(item.id);
      assert.deepEqual(listed, [webhookId]);
    });

    test('CIT + MIT + capture + refund', async () => {
      // CIT: a session that stores the card for later MITs, paid in the sandbox (no browser).
      const cit = await api.POST(`${V1}/cit`, {
        body: {
          pointOfSaleId: m.onlinePointOfSaleId,
          amount: 2500,
          currency: 'DKK',
          reference: 'client-cit',
          customerId: 'cust-client',
          subscription: { type: 'UNSCHEDULED' },
        },
      });
      assert.equal(cit.error, undefined, JSON.stringify(cit.error));
      const sessionId = cit.data!.session.id;
      const paid = await operator.POST('/sandbox/v1/sessions/{sessionId}/complete', { params: { path: { sessionId } }, body: { card: VISA } });
      assert.equal(paid.response.status, 200, JSON.stringify(paid.error));
      const session = await waitFor(async () => {
        const { data } = await api.GET(`${V1}/sessions/{sessionId}`, { params: { path: { sessionId } } });
        return data?.session.state === 'COMPLETED' ? data.session : null;
      }, 'session COMPLETED');
      assert.ok(session.subscriptionId && session.transactionId);
      subscriptionId = session.subscriptionId;

      // MIT on the stored card, then its lifecycle.
      const mit = await api.POST(`${V1}/mit`, {
        body: { subscriptionId, amount: 1000, currency: 'DKK', reference: 'client-mit', notificationUrl: receiver.url('/callback') },
      });
      assert.equal(mit.error, undefined, JSON.stringify(mit.error));
      const transactionId = mit.data!.transaction.id;
      const settled = await waitFor(async () => {
        const { data } = await api.GET(`${V1}/transactions/{transactionId}`, { params: { path: { transactionId } } });
        return data?.transaction.state === 'SUCCESS' ? data : null;
      }, 'MIT SUCCESS');
      assert.equal(settled.aggregates.authorized, 1000);

      const key = `capture-${transactionId}`;
      const capture = await api.POST(`${V1}/transactions/{transactionId}/capture`, {
        params: { path: { transactionId } },
        body: { amount: 1000 },
        headers: { 'Idempotency-Key': key },
      });
      assert.equal(capture.data?.success, true, JSON.stringify(capture.data ?? capture.error));
      // The caller's key is sent as given; a retry with it is a replay, not a second capture.
      const replay = await api.POST(`${V1}/transactions/{transactionId}/capture`, {
        params: { path: { transactionId } },
        body: { amount: 1000 },
        headers: { 'Idempotency-Key': key },
      });
      assert.equal(replay.response.headers.get('idempotent-replayed'), 'true');
      assert.equal(replay.data?.operationId, capture.data!.operationId);

      const refund = await api.POST(`${V1}/transactions/{transactionId}/refund`, { params: { path: { transactionId } }, body: { amount: 400 } });
      assert.equal(refund.data?.success, true, JSON.stringify(refund.data ?? refund.error));
      // An operation refused by the transaction's state is a 200 with success false (INTERFACE §3).
      const tooMuch = await api.POST(`${V1}/transactions/{transactionId}/refund`, { params: { path: { transactionId } }, body: { amount: 5000 } });
      assert.equal(tooMuch.data?.success, false);

      const detail = await api.GET(`${V1}/transactions/{transactionId}`, { params: { path: { transactionId } } });
      assert.equal(detail.data?.aggregates.captured, 1000);
      assert.equal(detail.data?.aggregates.refunded, 400);

      // The cursor iterator, one item per page: both transactions, newest first, each once.
      const ids = [];
      for await (const { transaction } of api.items(`${V1}/transactions`, { params: { query: { perPage: 1 } } })) ids.push(transaction.id);
      assert.deepEqual(ids, [transactionId, session.transactionId]);
    });

    test('errors are typed values: 404 and 422 with field errors', async () => {
      const missing = await api.GET(`${V1}/transactions/{transactionId}`, { params: { path: { transactionId: 'AAAAAAAAAAA' } } });
      assert.equal(missing.data, undefined);
      assert.equal(missing.response.status, 404);
      assert.equal(missing.error?.errorCode, 'NOT_FOUND');
      assert.equal(missing.error?.success, false);

      const invalid = await api.POST(`${V1}/mit`, { body: { subscriptionId, amount: -1, currency: 'DKK', notificationUrl: receiver.url('/callback') } });
      assert.equal(invalid.response.status, 422);
      // Every error type of an operation is assignable to the one §3 body, ApiError.
      const body: ApiError | undefined = invalid.error;
      assert.equal(body?.errorCode, 'VALIDATION_ERROR');
      assert.ok(body?.errors?.amount?.length, JSON.stringify(body));

      // The iterators, which cannot return a value mid-loop, throw the same body as PaymentsApiError.
      await assert.rejects(
        async () => {
          for await (const _ of api.items(`${V1}/transactions`, { params: { query: { perPage: 0 } } }));
        },
        (err: unknown) => err instanceof PaymentsApiError && err.status === 422 && err.body.errorCode === 'VALIDATION_ERROR',
      );
    });

    test('billing: a plan and an agreement on the subscription; plans through the page iterator', async () => {
      assert.ok(subscriptionId, 'the CIT flow ran first');
      const plans = [];
      for (const name of ['Monthly box', 'Weekly box']) {
        const { data, error } = await api.POST(`${V1}/subscriptions/billing/plans`, {
          body: { name, amount: 4900, currency: 'DKK', maxAttempts: 3, interval: { period: name.startsWith('Monthly') ? 'MONTH' : 'WEEK', frequency: 1 } },
        });
        assert.equal(error, undefined, JSON.stringify(error));
        plans.push(data!.billingPlan);
      }
      const agreement = await api.POST(`${V1}/subscriptions/billing/agreements`, {
        body: { billingPlanId: plans[0]!.id, subscriptionId, reference: 'client-agreement' },
      });
      assert.equal(agreement.error, undefined, JSON.stringify(agreement.error));
      assert.equal(agreement.data!.billingAgreement.state, 'ACTIVE');

      const pages = [];
      for await (const page of api.pages(`${V1}/subscriptions/billing/plans`, { params: { query: { perPage: 1 } } })) pages.push(page);
      assert.equal(pages.length, 2);
      assert.equal(pages[0]!.total, 2);
      assert.deepEqual(new Set(pages.flatMap((p) => p.items.map((i) => i.billingPlan.id))), new Set(plans.map((p) => p.id)));
    });

    test('webhooks: the deliveries of the webhook made earlier, listed', async () => {
      // The receiver first (the relay runs on its own schedule; a busy machine may need more than 10 s), then the log of it.
      await waitFor(() => receiver.at('/webhook').length >= 1, 'a webhook delivery at the receiver', 60_000);
      const deliveries = await waitFor(async () => {
        const list = [];
        for await (const item of api.items(`${V1}/webhooks/{webhookId}/deliveries`, { params: { path: { webhookId } } })) list.push(item);
        return list.length > 0 ? list : null;
      }, 'webhook deliveries');
      assert.ok(deliveries.length >= 1);
    });

    test('settlements: a sandbox run, then its transfers and their transactions through the cursor iterator', async () => {
      const run = await operator.POST('/sandbox/v1/settlements/run', { body: {} });
      assert.equal(run.error, undefined, JSON.stringify(run.error));
      const created = run.data!.settlementTransfers.map((s) => s.settlementTransfer.id);
      assert.ok(created.length >= 1);
      const listed = [];
      for await (const { settlementTransfer } of api.items(`${V1}/settlements/transfers`)) listed.push(settlementTransfer.id);
      assert.deepEqual(new Set(listed), new Set(created));
      const rows = [];
      for await (const row of api.items(`${V1}/settlements/transfers/{transferId}/transactions`, {
        params: { path: { transferId: created[0]! }, query: { perPage: 1 } },
      })) {
        rows.push(row);
      }
      assert.ok(rows.length >= 2, 'the CIT sale/capture, the MIT capture and its refund are settled');
    });

    test('a 429 from the service is a typed error without retries, and waited out after its Retry-After with them', { timeout: 60_000 }, async () => {
      const limited = await startTestRuntime(kind, { rateLimits: 'default' });
      try {
        await limited.runtime.app.listen({ port: 0, host: '127.0.0.1' });
        const baseUrl = `http://127.0.0.1:${(limited.runtime.app.server.address() as AddressInfo).port}`;
        const merchant = await limited.createMerchant({ physical: false });
        const noRetry = createPaymentsClient({ baseUrl, token: merchant.token, retry: { maxRetries: 0 } });
        // The list bucket (INTERFACE §5: 1 per 5 s, burst 30) runs dry.
        let refused: { error?: ApiError; response: Response } | null = null;
        for (let i = 0; i < 40 && !refused; i++) {
          const res = await noRetry.GET(`${V1}/webhooks`);
          if (res.response.status === 429) refused = res;
        }
        assert.ok(refused, 'the list bucket ran dry within 40 requests');
        assert.equal(refused.error?.errorCode, 'RATE_LIMIT_REACHED');
        const wait = Number(refused.response.headers.get('retry-after'));
        assert.ok(wait >= 1 && wait <= 5, `Retry-After ${wait}`);

        const patient = createPaymentsClient({ baseUrl, token: merchant.token });
        const started = Date.now();
        const { data, error } = await patient.GET(`${V1}/webhooks`);
        assert.equal(error, undefined, JSON.stringify(error));
        assert.deepEqual(data?.items, []);
        assert.ok(Date.now() - started >= (wait - 1) * 1000, 'waited for Retry-After');
      } finally {
        await limited.close();
      }
    });

    test('every mutating call carried an Idempotency-Key; reads did not', () => {
      const mutating = sent.filter((r) => r.method !== 'GET');
      assert.ok(mutating.length >= 8);
      for (const r of mutating) assert.ok(r.key && r.key.length > 0, `${r.method} ${r.path} without Idempotency-Key`);
      assert.ok(sent.filter((r) => r.method === 'GET').every((r) => r.key === null));
      // Generated keys are fresh per call (the two captures shared the caller's own key on purpose).
      const generated = mutating.map((r) => r.key).filter((k) => !k!.startsWith('capture-'));
      assert.equal(new Set(generated).size, generated.length);
    });
  });
}
