/**
 * Docs with an example for everything (issue 46 item 5), checked on the document a running
 * service serves (GET /openapi.json):
 *   - every operation has a short summary and a description;
 *   - every request body and every documented response with a body (2xx and errors) has an example;
 *   - every example is valid against its own schema, with the project's Ajv and the formats the app
 *     registers (iso4217, strict date-time), objects closed so that a field the schema does not name fails;
 *   - every request example, sent to the service with the ids of this test's own objects in its path
 *     parameters and id fields, gets a documented answer: one of the operation's 2xx statuses and a
 *     body valid against that response's schema;
 *   - every operation without a request body, called with the ids of this test's objects (one of every
 *     kind, and a fresh one where the call changes or deletes it), gets such a documented answer too.
 * Both stores. Nothing is skipped: the one operation that needs an acquirer answer in doubt (resolve a
 * payment in doubt) runs against a scripted acquirer in a runtime of its own.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import AjvCompiler from '@fastify/ajv-compiler';
import { isKnownCurrency } from '../../src/shared/currencies.js';
import { TRANSACTION_ID_PATTERN } from '../../src/shared/ids.js';
import { API, startTestRuntime, type TestClient, type TestResponse, type TestRuntime } from '../support/harness.js';
import { ScriptedAcquirer } from '../support/scripted-acquirer.js';
import { availableStores } from '../support/stores.js';
import { closed } from '../support/closed-schema.js';

type Json = Record<string, any>;
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const MAX_SUMMARY = 60;

type ValidateFn = ((data: unknown) => boolean) & { errors?: unknown[] | null };
/** The project's validator compiler with the app's formats, without coercion, defaults or stripping: a value must be valid as written. */
const compile = (AjvCompiler as unknown as () => (externals: object, options: object) => (route: { schema: object }) => ValidateFn)()(
  {},
  {
    customOptions: { allErrors: true, coerceTypes: false, useDefaults: false, removeAdditional: false },
    onCreate: (ajv: { addFormat(name: string, format: object): void }) => {
      ajv.addFormat('iso4217', { type: 'string', validate: isKnownCurrency });
      const dateTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;
      ajv.addFormat('date-time', { type: 'string', validate: (v: string) => dateTime.test(v) && !Number.isNaN(Date.parse(v)) });
    },
  },
);

interface Operation {
  key: string;
  method: string;
  path: string;
  op: Json;
}

function operationsOf(doc: Json): Operation[] {
  return Object.entries(doc.paths as Json).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((m) => ({ key: `${m.toUpperCase()} ${path}`, method: m.toUpperCase(), path, op: item[m] as Json })),
  );
}

/** The examples of a media type object (`example` or named `examples`). */
function examplesOf(media: Json | undefined): unknown[] {
  if (!media) return [];
  if ('example' in media) return [media.example];
  return Object.values((media.examples ?? {}) as Json).map((e) => (e as Json).value);
}

/** A schema with its `#/components/schemas/…` references replaced by the components. */
function deref(schema: unknown, doc: Json): unknown {
  if (Array.isArray(schema)) return schema.map((s) => deref(s, doc));
  if (schema === null || typeof schema !== 'object') return schema;
  const ref = (schema as Json).$ref;
  if (typeof ref === 'string' && ref.startsWith('#/components/schemas/')) return deref(doc.components.schemas[ref.slice('#/components/schemas/'.length)], doc);
  return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, k === 'examples' ? v : deref(v, doc)]));
}

const validatorOf = (schema: unknown, doc: Json): ValidateFn => compile({ schema: closed(deref(schema, doc)) as object });

/** Every (where, media) of an operation that must carry an example: its request body and each response with a body. */
function mediaOf(op: Json): Array<{ where: string; media: Json }> {
  const found: Array<{ where: string; media: Json }> = [];
  const body = op.requestBody?.content?.['application/json'];
  if (op.requestBody) found.push({ where: 'request body', media: body });
  for (const [status, response] of Object.entries(op.responses as Json)) {
    const content = (response as Json).content;
    if (!content) continue; // an empty body (documented without content): nothing to show
    found.push({ where: `response ${status}`, media: content['application/json'] });
  }
  return found;
}

// ---------------------------------------------------------------------------------------------
// The world the request examples run in: a merchant of shop.example.com (the examples' domain)
// ---------------------------------------------------------------------------------------------

const THIS_YEAR = new Date().getUTCFullYear();
const card = (number = '4111111111111111') => ({ number, expiryMonth: 12, expiryYear: THIS_YEAR + 8, cvc: '123', holderName: 'Test Holder' });

function must(res: TestResponse, what: string): any {
  if (res.status !== 200) throw new Error(`${what}: HTTP ${res.status} ${res.text}`);
  return res.body;
}

interface World {
  t: TestRuntime;
  accountId: string;
  api: TestClient;
  online: string;
  physical: string;
  terminals: string[];
}

/** A new account, PENDING. */
async function createAccount(t: TestRuntime, name: string): Promise<{ id: string }> {
  const { account } = must(
    await t.operator.post(`${API}/partner/accounts`, {
      name,
      email: `${name.toLowerCase()}@example.com`,
      currencyCode: 'EUR',
      timezone: 'UTC',
      domain: 'example.com',
    }),
    'account',
  );
  return account;
}

async function newAccount(t: TestRuntime, name: string): Promise<{ accountId: string; token: string }> {
  const account = await createAccount(t, name);
  must(await t.operator.patch(`${API}/partner/accounts/${account.id}/activate`), 'activate');
  const { accessToken } = must(await t.operator.post(`${API}/partner/accounts/${account.id}/access-token`, { environment: 'test' }), 'token');
  return { accountId: account.id, token: accessToken };
}

async function buildWorld(t: TestRuntime): Promise<World> {
  const { accountId, token } = await newAccount(t, `Examples-${randomBytes(3).toString('hex')}`);
  must(await t.operator.patch(`${API}/partner/accounts/${accountId}/capabilities`, { moto: true, syncPayout: true }), 'capabilities');
  // An API key: access tokens expire on the service clock, which one example moves.
  const { key } = must(await t.client(token).post(`${API}/management/api-keys`, { name: 'examples' }), 'api key');
  const api = t.client(key);
  const pos = async (type: string) =>
    must(await api.post(`${API}/management/point-of-sales`, { name: type, domain: 'shop.example.com', webhookAuthentication: 'Bearer examples', type }), 'pos')
      .pointOfSale.id as string;
  const online = await pos('ONLINE');
  const physical = await pos('PHYSICAL');
  const terminals: string[] = [];
  for (const name of ['Till 1', 'Till 2', 'Till 3']) {
    terminals.push(must(await api.post(`${API}/management/point-of-sales/${physical}/terminals`, { name }), 'terminal').terminal.id);
  }
  return { t, accountId, api, online, physical, terminals };
}

/** An authorized (not captured) MOTO payment of `amount`. */
async function authorized(w: World, amount = 10_000): Promise<string> {
  const body = must(
    await w.api.post(`${API}/moto`, {
      transaction: { pointOfSaleId: w.online, amount, currency: 'EUR', instantCapture: 'OFF' },
      card: card(),
    }),
    'moto',
  );
  assert.equal(body.transaction.state, 'SUCCESS');
  return body.transaction.id;
}

/** A CIT session that stored a card on an ACTIVE subscription. */
async function subscription(w: World): Promise<{ subscriptionId: string; paymentMethodId: string }> {
  const cit = must(
    await w.api.post(`${API}/cit`, {
      pointOfSaleId: w.online,
      amount: 0,
      currency: 'EUR',
      customerId: 'customer-81',
      subscription: { type: 'UNSCHEDULED' },
    }),
    'cit',
  );
  must(await w.t.operator.post(`/sandbox/v1/sessions/${cit.session.id}/complete`, { card: card() }), 'complete');
  await w.t.runtime.runner.drain();
  const { session } = must(await w.api.get(`${API}/sessions/${cit.session.id}`), 'session');
  assert.ok(session.subscriptionId && session.paymentMethodId, JSON.stringify(session));
  return { subscriptionId: session.subscriptionId, paymentMethodId: session.paymentMethodId };
}

async function plan(w: World): Promise<string> {
  return must(
    await w.api.post(`${API}/subscriptions/billing/plans`, {
      name: 'Plan',
      amount: 1299,
      currency: 'EUR',
      maxAttempts: 3,
      interval: { period: 'MONTH', frequency: 1 },
    }),
    'plan',
  ).billingPlan.id;
}

/** What an example needs: who sends it, its path parameters, and the ids to put into its body (by field name or dotted path). */
interface Prepared {
  client: TestClient;
  params?: Record<string, string>;
  ids?: Record<string, string>;
}
type Preparer = (w: World) => Promise<Prepared>;

const merchant: Preparer = async (w) => ({ client: w.api, ids: { pointOfSaleId: w.online } });
const operator: Preparer = async (w) => ({ client: w.t.operator });

/** Per operation (`METHOD path`), how to make the world its request example needs. */
const PREPARE: Record<string, Preparer> = {
  [`POST ${API}/partner/accounts`]: operator,
  [`POST ${API}/partner/accounts/{accountId}/access-token`]: async (w) => ({ client: w.t.operator, params: { accountId: w.accountId } }),
  [`PATCH ${API}/partner/accounts/{accountId}/capabilities`]: async (w) => ({ client: w.t.operator, params: { accountId: w.accountId } }),
  // Another account: the agreement routes its card payments elsewhere.
  [`PUT ${API}/partner/accounts/{accountId}/acquirer-agreement`]: async (w) => ({
    client: w.t.operator,
    params: { accountId: (await newAccount(w.t, `Agreement-${randomBytes(3).toString('hex')}`)).accountId },
  }),
  [`POST ${API}/management/api-keys`]: merchant,
  [`POST ${API}/management/point-of-sales`]: merchant,
  [`POST ${API}/management/point-of-sales/{pointOfSaleId}/terminals`]: async (w) => ({ client: w.api, params: { pointOfSaleId: w.physical } }),
  [`POST ${API}/moto`]: merchant,
  [`POST ${API}/payout`]: async (w) => ({ client: w.api, ids: { pointOfSaleId: w.online, paymentMethodId: (await subscription(w)).paymentMethodId } }),
  [`POST ${API}/payout-sync`]: async (w) => ({ client: w.api, ids: { pointOfSaleId: w.online, paymentMethodId: (await subscription(w)).paymentMethodId } }),
  [`POST ${API}/payment-methods/{paymentMethodId}/account-updates`]: async (w) => ({
    client: w.api,
    params: { paymentMethodId: (await subscription(w)).paymentMethodId },
  }),
  [`POST /sandbox/v1/payment-methods/{paymentMethodId}/account-update`]: async (w) => {
    const { paymentMethodId } = await subscription(w);
    must(await w.api.post(`${API}/payment-methods/${paymentMethodId}/account-updates`, { enabled: true }), 'enrol');
    return { client: w.t.operator, params: { paymentMethodId } };
  },
  [`POST ${API}/transactions/{transactionId}/capture`]: async (w) => ({ client: w.api, params: { transactionId: await authorized(w) } }),
  [`POST ${API}/transactions/{transactionId}/void`]: async (w) => ({ client: w.api, params: { transactionId: await authorized(w) } }),
  [`POST ${API}/transactions/{transactionId}/refund`]: async (w) => {
    const transactionId = await authorized(w);
    must(await w.api.post(`${API}/transactions/${transactionId}/capture`, { amount: 10_000 }), 'capture');
    return { client: w.api, params: { transactionId } };
  },
  [`POST ${API}/webhooks`]: merchant,
  [`POST ${API}/sale`]: async (w) => ({ client: w.api, ids: { pointOfSaleId: w.physical, 'terminal.id': w.terminals[0]! } }),
  [`POST /sandbox/v1/terminals/{terminalId}/tap`]: async (w) => {
    const terminalId = w.terminals[1]!;
    must(await w.api.post(`${API}/sale`, { terminal: { id: terminalId }, transaction: { pointOfSaleId: w.physical, amount: 1850, currency: 'EUR' } }), 'sale');
    await w.t.runtime.runner.drain();
    return { client: w.t.operator, params: { terminalId } };
  },
  [`PATCH ${API}/subscriptions/{subscriptionId}`]: async (w) => ({ client: w.api, params: { subscriptionId: (await subscription(w)).subscriptionId } }),
  [`POST ${API}/cit`]: merchant,
  [`POST /sandbox/v1/sessions/{sessionId}/complete`]: async (w) => {
    const cit = must(await w.api.post(`${API}/cit`, { pointOfSaleId: w.online, amount: 2500, currency: 'EUR' }), 'cit');
    return { client: w.t.operator, params: { sessionId: cit.session.id } };
  },
  [`POST ${API}/mit`]: async (w) => ({ client: w.api, ids: { subscriptionId: (await subscription(w)).subscriptionId } }),
  [`POST ${API}/mit/batch`]: async (w) => ({ client: w.api, ids: { subscriptionId: (await subscription(w)).subscriptionId } }),
  [`POST ${API}/payment-links`]: merchant,
  [`POST ${API}/multi-links`]: merchant,
  [`POST ${API}/subscriptions/billing/plans`]: merchant,
  [`POST ${API}/subscriptions/billing/agreements`]: async (w) => ({
    client: w.api,
    ids: { billingPlanId: await plan(w), subscriptionId: (await subscription(w)).subscriptionId },
  }),
  [`POST ${API}/subscriptions/billing/agreements/{agreementId}/resume`]: async (w) => {
    const body = { billingPlanId: await plan(w), subscriptionId: (await subscription(w)).subscriptionId };
    const agreementId = must(await w.api.post(`${API}/subscriptions/billing/agreements`, body), 'agreement').billingAgreement.id;
    must(await w.api.post(`${API}/subscriptions/billing/agreements/${agreementId}/stop`), 'stop');
    return { client: w.api, params: { agreementId } };
  },
  [`POST /sandbox/v1/settlements/run`]: async (w) => {
    await authorized(w, 2500).then((id) => w.api.post(`${API}/transactions/${id}/capture`, { amount: 2500 }));
    return { client: w.t.operator };
  },
  // Last: it moves the service clock (years ahead with its second example).
  [`POST /sandbox/v1/clock`]: operator,
};

/**
 * Operations whose request example cannot be driven in this runtime (the sandbox acquirer), with
 * the reason. Resolving a payment in doubt needs an acquirer answer in doubt: it runs below in a
 * runtime of its own with a scripted acquirer, so this list is empty.
 */
const NOT_DRIVEN: Record<string, string> = {};
const IN_DOUBT_RESOLVE = `POST ${API}/partner/payments-in-doubt/{operationId}/resolve`;

/** The example with the world's ids put into the id fields it names. */
function withIds(example: unknown, ids: Record<string, string>, path = ''): unknown {
  if (Array.isArray(example)) return example.map((item) => withIds(item, ids, path));
  if (example === null || typeof example !== 'object') return example;
  return Object.fromEntries(
    Object.entries(example).map(([key, value]) => {
      const dotted = path ? `${path}.${key}` : key;
      const id = ids[dotted] ?? ids[key];
      return [key, id !== undefined && typeof value === 'string' ? id : withIds(value, ids, dotted)];
    }),
  );
}

const fillPath = (path: string, params: Record<string, string>): string =>
  path.replace(/\{(\w+)\}/g, (_, name: string) => {
    assert.ok(params[name], `a value for path parameter ${name}`);
    return encodeURIComponent(params[name]!);
  });

/** Sends one request example and checks the answer against the operation's documented 2xx responses. */
async function drive(doc: Json, { key, method, path, op }: Operation, example: unknown, prepared: Prepared): Promise<void> {
  const url = fillPath(path, prepared.params ?? {});
  const body = example === undefined ? undefined : withIds(example, prepared.ids ?? {});
  const idempotent = ((op.parameters ?? []) as Json[]).some((p) => p.in === 'header' && p.name === 'Idempotency-Key');
  const res = await prepared.client.request(method, url, {
    ...(body === undefined ? {} : { body }),
    ...(idempotent ? { idempotencyKey: `example-${randomBytes(6).toString('hex')}` } : {}),
  });
  const documented = Object.keys(op.responses as Json).filter((status) => status.startsWith('2'));
  assert.ok(
    documented.includes(String(res.status)),
    `${key} with ${JSON.stringify(body)}: HTTP ${res.status} is not one of ${documented.join(', ')}: ${res.text}`,
  );
  const content = (op.responses as Json)[String(res.status)].content?.['application/json'];
  if (!content) {
    assert.equal(res.text, '', `${key}: documented without a body`);
    return;
  }
  const validate = validatorOf(content.schema, doc);
  assert.ok(validate(res.body), `${key}: the answer does not match its documented schema: ${JSON.stringify(validate.errors)}\n${res.text}`);
  // An operation answer (capture, refund, void) is HTTP 200 even when refused: the example must really work.
  if (typeof res.body?.success === 'boolean') assert.equal(res.body.success, true, `${key} with ${JSON.stringify(body)} was refused: ${res.text}`);
}

/** Ids of one object of every kind, for the path parameters of the operations without a request body. */
async function objectsOf(w: World): Promise<Record<string, string>> {
  const { subscriptionId, paymentMethodId } = await subscription(w);
  const moto = must(
    await w.api.post(`${API}/moto`, {
      transaction: { pointOfSaleId: w.online, amount: 2500, currency: 'EUR', notificationUrl: 'https://shop.example.com/payments/callback' },
      card: card(),
    }),
    'moto',
  ).transaction.id as string;
  must(await w.api.post(`${API}/transactions/${moto}/capture`, { amount: 2500 }), 'capture');
  await w.t.runtime.runner.drain();
  const notificationId = must(await w.api.get(`${API}/transactions/${moto}/notifications`), 'notifications').notifications[0].id as string;
  const planId = await plan(w);
  const agreementId = must(await w.api.post(`${API}/subscriptions/billing/agreements`, { billingPlanId: planId, subscriptionId }), 'agreement').billingAgreement
    .id;
  // A month and a day on: the agreement's first charge is made.
  must(await w.t.operator.post('/sandbox/v1/clock', { advanceSeconds: 32 * 86_400 }), 'clock');
  await w.t.runtime.runner.drain();
  const charges = must(await w.api.get(`${API}/subscriptions/billing/charges?billingAgreementId=${agreementId}`), 'charges').items;
  assert.ok(charges.length > 0, 'a billing charge');
  const transfers = must(await w.t.operator.post('/sandbox/v1/settlements/run', {}), 'settlement run').settlementTransfers;
  const transferId =
    transfers.length > 0
      ? (transfers[0].settlementTransfer.id as string)
      : (must(await w.api.get(`${API}/settlements/transfers`), 'transfers').items[0].settlementTransfer.id as string);
  const cit = must(await w.api.post(`${API}/cit`, { pointOfSaleId: w.online, amount: 1500, currency: 'EUR' }), 'cit');
  const paymentLinkId = must(await w.api.post(`${API}/payment-links`, { pointOfSaleId: w.online, amount: 1500, currency: 'EUR' }), 'payment link').id;
  const multiLinkId = must(await w.api.post(`${API}/multi-links`, { pointOfSaleId: w.online, amount: 1500, currency: 'EUR' }), 'multi-link').multiLink.id;
  const webhookId = must(
    await w.api.post(`${API}/webhooks`, { url: 'https://shop.example.com/hooks', events: ['transaction.success.v1'], secret: 'Bearer hook' }),
    'webhook',
  ).webhook.id;
  return {
    accountId: w.accountId,
    pointOfSaleId: w.online,
    terminalId: w.terminals[0]!,
    transactionId: moto,
    notificationId,
    paymentMethodId,
    subscriptionId,
    sessionId: cit.session.id,
    planId,
    agreementId,
    billingAgreementChargeId: charges[0].billingAgreementCharge.id,
    transferId,
    paymentLinkId,
    multiLinkId,
    webhookId,
  };
}

/** A fresh account: PENDING unless activated. */
async function pendingAccount(t: TestRuntime): Promise<string> {
  return (await createAccount(t, `Pending-${randomBytes(3).toString('hex')}`)).id;
}

/** Operations without a request body whose path needs an object of its own (it is changed, deleted, or in a particular state). */
const OWN_OBJECT: Record<string, (w: World) => Promise<Record<string, string>>> = {
  [`PATCH ${API}/partner/accounts/{accountId}/activate`]: async (w) => ({ accountId: await pendingAccount(w.t) }),
  [`DELETE ${API}/partner/accounts/{accountId}`]: async (w) => ({ accountId: await pendingAccount(w.t) }),
  [`GET ${API}/partner/accounts/{accountId}/acquirer-agreement`]: async (w) => {
    const accountId = await pendingAccount(w.t);
    must(await w.t.operator.request('PUT', `${API}/partner/accounts/${accountId}/acquirer-agreement`, { body: { acquirer: 'sandbox' } }), 'agreement');
    return { accountId };
  },
  [`DELETE ${API}/partner/accounts/{accountId}/acquirer-agreement`]: async (w) => {
    const accountId = await pendingAccount(w.t);
    must(await w.t.operator.request('PUT', `${API}/partner/accounts/${accountId}/acquirer-agreement`, { body: { acquirer: 'sandbox' } }), 'agreement');
    return { accountId };
  },
  [`POST ${API}/transactions/{transactionId}/renew`]: async (w) => {
    const cit = must(await w.api.post(`${API}/cit`, { pointOfSaleId: w.online, amount: 2000, currency: 'EUR' }), 'cit');
    const paid = must(await w.t.operator.post(`/sandbox/v1/sessions/${cit.session.id}/complete`, { paymentMethodType: 'KLARNA' }), 'klarna');
    return { transactionId: paid.transaction.id };
  },
  [`POST ${API}/transactions/{transactionId}/abort`]: async (w) => {
    const sale = must(
      await w.api.post(`${API}/sale`, { terminal: { id: w.terminals[2]! }, transaction: { pointOfSaleId: w.physical, amount: 990, currency: 'EUR' } }),
      'sale',
    );
    await w.t.runtime.runner.drain();
    return { transactionId: sale.transaction.id };
  },
  [`DELETE ${API}/payment-methods/{paymentMethodId}`]: async (w) => ({ paymentMethodId: (await subscription(w)).paymentMethodId }),
  [`DELETE ${API}/subscriptions/{subscriptionId}`]: async (w) => ({ subscriptionId: (await subscription(w)).subscriptionId }),
  [`POST ${API}/subscriptions/billing/agreements/{agreementId}/stop`]: async (w) => ({
    agreementId: must(
      await w.api.post(`${API}/subscriptions/billing/agreements`, { billingPlanId: await plan(w), subscriptionId: (await subscription(w)).subscriptionId }),
      'agreement',
    ).billingAgreement.id,
  }),
  [`DELETE ${API}/payment-links/{paymentLinkId}`]: async (w) => ({
    paymentLinkId: must(await w.api.post(`${API}/payment-links`, { pointOfSaleId: w.online, amount: 700, currency: 'EUR' }), 'payment link').id,
  }),
  [`DELETE ${API}/multi-links/{multiLinkId}`]: async (w) => ({
    multiLinkId: must(await w.api.post(`${API}/multi-links`, { pointOfSaleId: w.online, amount: 700, currency: 'EUR' }), 'multi-link').multiLink.id,
  }),
  [`DELETE ${API}/webhooks/{webhookId}`]: async (w) => ({ webhookId: await webhook(w) }),
  [`POST ${API}/webhooks/{webhookId}/pause`]: async (w) => ({ webhookId: await webhook(w) }),
  [`POST ${API}/webhooks/{webhookId}/resume`]: async (w) => {
    const webhookId = await webhook(w);
    must(await w.api.post(`${API}/webhooks/${webhookId}/pause`), 'pause');
    return { webhookId };
  },
};

async function webhook(w: World): Promise<string> {
  return must(
    await w.api.post(`${API}/webhooks`, { url: 'https://shop.example.com/hooks/other', events: ['transaction.failed.v1'], secret: 'Bearer other' }),
    'webhook',
  ).webhook.id;
}

/** Reads first, then what changes things, then what deletes them. */
const rank = ({ method }: Operation): number => ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'].indexOf(method);

for (const kind of await availableStores()) {
  describe(`OpenAPI: an example for everything, valid and true (${kind})`, () => {
    let t: TestRuntime;
    let doc: Json;
    let ops: Operation[];
    before(async () => {
      // clearhausAvailable: the acquirer agreement example names Clearhaus (no request is sent to set it).
      t = await startTestRuntime(kind, {}, { startWorkers: false, clearhausAvailable: true });
      const res = await t.client(null).get('/openapi.json');
      assert.equal(res.status, 200);
      doc = res.body;
      ops = operationsOf(doc);
    });
    after(() => t.close());

    test('every operation has a short summary and a description that says more', () => {
      assert.ok(ops.length >= 70, `${ops.length} operations`);
      for (const { key, op } of ops) {
        assert.ok(typeof op.summary === 'string' && op.summary.length > 0 && op.summary.length <= MAX_SUMMARY, `${key}: summary "${op.summary}"`);
        const description = String(op.description ?? '');
        const own = description.split('**Errors**')[0]!.trim();
        assert.ok(own.length >= 40, `${key}: a description of its own`);
        assert.notEqual(own, op.summary, `${key}: the description repeats the summary`);
        for (const status of Object.keys(op.responses as Json).filter((s) => Number(s) >= 400)) {
          assert.match(description, new RegExp(`^\\| ${status} \\| \`[A-Z_]+\` \\|`, 'm'), `${key}: the description lists its ${status} errors`);
        }
      }
    });

    test('every request body and every documented response has an example', () => {
      const missing: string[] = [];
      let count = 0;
      for (const { key, op } of ops) {
        for (const { where, media } of mediaOf(op)) {
          count++;
          if (examplesOf(media).length === 0) missing.push(`${key} ${where}`);
        }
      }
      assert.deepEqual(missing, [], 'without an example');
      assert.ok(count >= 500, `${count} bodies checked`);
    });

    test('every example is valid against its own schema (the app formats, no unknown fields)', () => {
      const invalid: string[] = [];
      let count = 0;
      for (const { key, op } of ops) {
        for (const { where, media } of mediaOf(op)) {
          const validate = validatorOf(media.schema, doc);
          for (const example of examplesOf(media)) {
            count++;
            if (!validate(example)) invalid.push(`${key} ${where}: ${JSON.stringify(validate.errors)}`);
          }
        }
      }
      assert.deepEqual(invalid, []);
      assert.ok(count >= 600, `${count} examples checked`);
    });

    test('example values look real: transaction ids in their format, other ids UUIDs, integer minor units, ISO 4217 currencies', () => {
      const transactionId = new RegExp(TRANSACTION_ID_PATTERN);
      const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
      const UUID_FIELDS = new Set([
        'pointOfSaleId',
        'subscriptionId',
        'paymentMethodId',
        'sessionId',
        'billingPlanId',
        'billingAgreementId',
        'billingAgreementChargeId',
        'webhookId',
        'terminalId',
        'operationId',
        'accountId',
        'settlementTransferId',
        'referenceTransactionOperationId',
      ]);
      const wrong: string[] = [];
      const check = (value: unknown, where: string, key = ''): void => {
        if (Array.isArray(value)) return value.forEach((item, i) => check(item, `${where}.${i}`, key));
        if (value !== null && typeof value === 'object') {
          // A 422's `errors` maps field names to messages: not values of those fields.
          for (const [k, v] of Object.entries(value)) if (k !== 'errors') check(v, `${where}.${k}`, k);
          return;
        }
        if (value === null) return;
        const bad = (what: string) => wrong.push(`${where} = ${JSON.stringify(value)}: ${what}`);
        if (key === 'transactionId' && !transactionId.test(String(value))) bad('not a transaction id');
        if (UUID_FIELDS.has(key) && !uuid.test(String(value))) bad('not a UUID');
        if (['currency', 'currencyCode', 'settlementCurrency'].includes(key) && !isKnownCurrency(String(value))) bad('not an ISO 4217 currency');
        if (['amount', 'fee', 'authorized', 'captured', 'refunded', 'voided', 'remaining', 'paidOut'].includes(key)) {
          // Settlement amounts are decimal strings (INTERFACE §1); every other amount is an integer of minor units.
          if (!(Number.isInteger(value) || (typeof value === 'string' && /^-?\d+\.\d+$/.test(value) && where.includes('djustment'))))
            bad('not integer minor units');
        }
      };
      for (const { key, op } of ops) for (const { where, media } of mediaOf(op)) examplesOf(media).forEach((e, i) => check(e, `${key} ${where} #${i + 1}`));
      assert.deepEqual(wrong, []);
    });

    test('error examples belong to their operation: capture shows no renew refusal, 404 names the resource of the path', () => {
      const capture = doc.paths[`${API}/transactions/{transactionId}/capture`].post as Json;
      const all = JSON.stringify(Object.values(capture.responses as Json).map((r) => examplesOf((r as Json).content?.['application/json'])));
      assert.doesNotMatch(all, /[Rr]enew/);
      assert.match(JSON.stringify(examplesOf(capture.responses['404'].content['application/json'])), /The transaction does not exist\./);
      const plan = doc.paths[`${API}/subscriptions/billing/plans/{planId}`].get as Json;
      assert.match(JSON.stringify(examplesOf(plan.responses['404'].content['application/json'])), /The billing plan does not exist\./);
      const moto = doc.paths[`${API}/moto`].post as Json;
      assert.match(JSON.stringify(examplesOf(moto.responses['403'].content['application/json'])), /CAPABILITY_NOT_ENABLED/);
    });

    test('every request example, sent to the service with this test’s ids, gets a documented answer', async () => {
      const w = await buildWorld(t);
      const withBodies = ops.filter(({ op }) => op.requestBody);
      const keys = withBodies.map(({ key }) => key);
      const undriven = keys.filter((key) => !PREPARE[key] && !NOT_DRIVEN[key] && key !== IN_DOUBT_RESOLVE);
      assert.deepEqual(undriven, [], 'operations with a request body the test does not know how to drive');
      const order = Object.keys(PREPARE);
      let sent = 0;
      for (const operation of withBodies.filter(({ key }) => PREPARE[key]).sort((a, b) => order.indexOf(a.key) - order.indexOf(b.key))) {
        for (const example of examplesOf(operation.op.requestBody.content['application/json'])) {
          await drive(doc, operation, example, await PREPARE[operation.key]!(w));
          sent++;
        }
      }
      assert.ok(sent >= 40, `${sent} request examples sent`);
    });

    test('every operation without a request body answers a documented 2xx for this test’s objects', async () => {
      const w = await buildWorld(t);
      const objects = await objectsOf(w);
      const partner = (path: string) => path.includes('/partner/') || path.startsWith('/sandbox/');
      let sent = 0;
      for (const operation of ops.filter(({ op }) => !op.requestBody).sort((a, b) => rank(a) - rank(b))) {
        const params = { ...objects, ...(await OWN_OBJECT[operation.key]?.(w)) };
        await drive(doc, operation, undefined, { client: partner(operation.path) ? t.operator : w.api, params });
        sent++;
      }
      assert.ok(sent >= 45, `${sent} operations driven`);
    });

    test('resolving a payment in doubt, with a scripted acquirer that leaves a capture in doubt', async () => {
      const acquirer = new ScriptedAcquirer();
      acquirer.repeatable = new Set(['void']);
      const scripted = await startTestRuntime(kind, {}, { startWorkers: false, acquirer });
      try {
        const w = await buildWorld(scripted);
        const operation = operationsOf(doc).find(({ key }) => key === IN_DOUBT_RESOLVE)!;
        for (const example of examplesOf(operation.op.requestBody.content['application/json'])) {
          const transactionId = await authorized(w);
          acquirer.script(transactionId, 'capture', ['timeout']);
          const held = must(await w.api.post(`${API}/transactions/${transactionId}/capture`, { amount: 300 }), 'capture in doubt');
          assert.equal(held.state, 'PROCESSING', JSON.stringify(held));
          await drive(doc, operation, example, { client: scripted.operator, params: { operationId: held.operationId } });
        }
      } finally {
        await scripted.close();
      }
    });
  });
}
