// Run by test/client/package.test.ts with plain `node`, from a folder outside the repository where
// the packed client was installed with `npm install <tarball>`: one MOTO through its lifecycle, as an
// integrator's JavaScript would drive it. Prints what it saw as one JSON line for the test to check.
import http from 'node:http';
import { createPaymentsClient, DeliveryVerificationError, PaymentsApiError, verifyDelivery } from '@payments-service/client';

const { PAYMENTS_URL, PAYMENTS_API_KEY, PAYMENTS_POS_ID } = process.env;
const V1 = '/public/api/v1';
const api = createPaymentsClient({ baseUrl: PAYMENTS_URL, token: PAYMENTS_API_KEY });
const fail = (what, result) => {
  throw new Error(`${what}: HTTP ${result.response.status} ${JSON.stringify(result.error ?? result.data)}`);
};

// A receiver for the MOTO's signed callback: raw body text and headers, as a shop's server gets them.
const callbacks = [];
const receiver = http.createServer((req, res) => {
  let text = '';
  req.setEncoding('utf8');
  req.on('data', (chunk) => (text += chunk));
  req.on('end', () => {
    callbacks.push({ text, headers: req.headers });
    res.end();
  });
});
// `::` takes IPv4 too; the point of sale's approved domain is localhost (test/online/helpers.ts does the same).
await new Promise((resolve) => receiver.listen(0, '::', resolve));
const notificationUrl = `http://localhost:${receiver.address().port}/callback`;

// MOTO: synchronous, card data in the body, authorized only (instantCapture OFF).
const reference = `package-${Date.now()}`;
const moto = await api.POST(`${V1}/moto`, {
  body: {
    transaction: { pointOfSaleId: PAYMENTS_POS_ID, amount: 2500, currency: 'DKK', reference, instantCapture: 'OFF', notificationUrl },
    card: { number: '4111111111111111', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 3, cvc: '123' },
  },
  headers: { 'Idempotency-Key': `moto-${reference}` },
});
if (moto.error) fail('moto', moto);
const transactionId = moto.data.transaction.id;

// Capture with the caller's key, twice: the second is the first answer replayed.
const captureInit = { params: { path: { transactionId } }, body: { amount: 2500 }, headers: { 'Idempotency-Key': `capture-${reference}` } };
const capture = await api.POST(`${V1}/transactions/{transactionId}/capture`, captureInit);
if (capture.error || !capture.data.success) fail('capture', capture);
const replay = await api.POST(`${V1}/transactions/{transactionId}/capture`, captureInit);

const refund = await api.POST(`${V1}/transactions/{transactionId}/refund`, { params: { path: { transactionId } }, body: { amount: 1000 } });
if (refund.error || !refund.data.success) fail('refund', refund);

const read = await api.GET(`${V1}/transactions/{transactionId}`, { params: { path: { transactionId } } });
if (read.error) fail('read', read);

// Errors are values; the iterators throw PaymentsApiError.
const missing = await api.GET(`${V1}/transactions/{transactionId}`, { params: { path: { transactionId: 'AAAAAAAAAAA' } } });
const listed = [];
for await (const { transaction } of api.items(`${V1}/transactions`, { params: { query: { perPage: 1 } } })) listed.push(transaction.id);
let thrown = null;
try {
  for await (const _ of api.items(`${V1}/transactions`, { params: { query: { perPage: 0 } } }));
} catch (err) {
  thrown = err instanceof PaymentsApiError ? { status: err.status, errorCode: err.body.errorCode } : String(err);
}

// The callback, verified with the point of sale's signing secret; a changed body is refused.
const pos = await api.GET(`${V1}/management/point-of-sales/{pointOfSaleId}`, { params: { path: { pointOfSaleId: PAYMENTS_POS_ID } } });
if (pos.error) fail('point of sale', pos);
for (let waited = 0; callbacks.length === 0 && waited < 15_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
receiver.close();
const [callback] = callbacks;
let delivery = null;
if (callback) {
  verifyDelivery(callback.text, callback.headers, pos.data.pointOfSale.signingSecret);
  let tampered = null;
  try {
    verifyDelivery(`${callback.text} `, callback.headers, pos.data.pointOfSale.signingSecret);
  } catch (err) {
    tampered = err instanceof DeliveryVerificationError ? err.name : String(err);
  }
  delivery = { verified: true, aboutTheMoto: callback.text.includes(transactionId), tampered };
}

// The OpenAPI document the client was generated from, as a JSON module.
const { default: spec } = await import('@payments-service/client/openapi.json', { with: { type: 'json' } });

console.log(
  JSON.stringify({
    specTitle: spec.info.title,
    resolved: import.meta.resolve('@payments-service/client'),
    motoState: moto.data.transaction.state,
    transactionId,
    captureOperationId: capture.data.operationId,
    replayed: replay.response.headers.get('idempotent-replayed'),
    replayOperationId: replay.data?.operationId,
    state: read.data.transaction.state,
    aggregates: read.data.aggregates,
    missing: { status: missing.response.status, errorCode: missing.error?.errorCode },
    listed,
    thrown,
    delivery,
  }),
);
