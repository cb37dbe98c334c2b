/**
 * Acquirer agreements, INTERFACE §12.1, on both stores: PUT/GET/DELETE round trip for sandbox and
 * clearhaus; a PUT replaces the agreement by writing a new row (the old one kept, marked removed,
 * still found by id) and keeps createdAt; a replayed Idempotency-Key writes nothing; the payment
 * engine's view (credentialsOf, currentFor) opens the key, keeps removed rows and sees a change of
 * another process within a second; the OpenAPI entries are tagged, described and exemplified.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AcquirerAgreementsService, CURRENT_AGREEMENT_CACHE_MS } from '../../src/modules/acquirer-agreements/acquirer-agreements.service.js';
import { API, startTestRuntime, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { AGREEMENT_KEYS, agreementUrl, createAccount, newApiKey, ok, putAgreement } from './support.js';

for (const kind of await availableStores()) {
  describe(`acquirer agreements: happy paths (${kind})`, () => {
    let t: TestRuntime;
    before(async () => {
      t = await startTestRuntime(kind, {}, { startWorkers: false, clearhausAvailable: true });
    });
    after(() => t.close());

    const repo = () => t.runtime.store.acquirerAgreements;
    const service = () => t.runtime.services.acquirerAgreements;

    test('sandbox: PUT → 200 with the defaults, GET shows it, DELETE answers the removed record, then GET and DELETE are 404', async () => {
      const accountId = await createAccount(t);
      const put = ok(await putAgreement(t.operator, accountId, { acquirer: 'sandbox' }), 'PUT');
      assert.deepEqual(Object.keys(put), ['acquirerAgreement']);
      const agreement = put.acquirerAgreement;
      assert.deepEqual(Object.keys(agreement).sort(), AGREEMENT_KEYS);
      assert.equal(agreement.acquirer, 'sandbox');
      assert.equal(agreement.mcc, '5999');
      assert.equal(agreement.textOnStatement, null);
      assert.match(agreement.createdAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      assert.equal(agreement.updatedAt, agreement.createdAt);

      assert.deepEqual(ok(await t.operator.get(agreementUrl(accountId)), 'GET'), put);

      const removed = ok(await t.operator.delete(agreementUrl(accountId)), 'DELETE');
      assert.deepEqual(removed, put);
      const gone = await t.operator.get(agreementUrl(accountId));
      assert.equal(gone.status, 404);
      assert.equal(gone.body.errorCode, 'NOT_FOUND');
      assert.match(gone.body.message, /acquirer agreement/);
      assert.equal((await t.operator.delete(agreementUrl(accountId))).status, 404);
      assert.equal(await repo().current(accountId), null);
    });

    test('sandbox with its own MCC and text on statement', async () => {
      const accountId = await createAccount(t);
      const body = ok(await putAgreement(t.operator, accountId, { acquirer: 'sandbox', mcc: '4816', textOnStatement: 'SHOP.EXAMPLE.COM' }), 'PUT');
      assert.equal(body.acquirerAgreement.mcc, '4816');
      assert.equal(body.acquirerAgreement.textOnStatement, 'SHOP.EXAMPLE.COM');
      const row = await repo().current(accountId);
      assert.equal(row?.apiKeySealed, null, 'a sandbox agreement has no key');
      // null is "none", like leaving it out.
      assert.equal(
        ok(await putAgreement(t.operator, accountId, { acquirer: 'sandbox', textOnStatement: null }), 'PUT null').acquirerAgreement.textOnStatement,
        null,
      );
    });

    test('clearhaus: PUT → 200 without the key; a second PUT replaces it with a new row, keeps createdAt, and the old row stays, removed', async () => {
      const accountId = await createAccount(t);
      const key1 = newApiKey();
      const first = ok(
        await putAgreement(t.operator, accountId, { acquirer: 'clearhaus', apiKey: key1, mcc: '5411', textOnStatement: 'Corner Shop 42' }),
        'PUT 1',
      ).acquirerAgreement;
      assert.deepEqual(first, {
        acquirer: 'clearhaus',
        mcc: '5411',
        textOnStatement: 'Corner Shop 42',
        createdAt: first.createdAt,
        updatedAt: first.createdAt,
      });
      const row1 = await repo().current(accountId);
      assert.ok(row1);
      assert.equal(row1.acquirer, 'clearhaus');
      assert.equal(row1.removedAt, null);
      assert.ok(row1.apiKeySealed);

      await new Promise((resolve) => setTimeout(resolve, 5));
      const key2 = newApiKey();
      const second = ok(await putAgreement(t.operator, accountId, { acquirer: 'clearhaus', apiKey: key2, mcc: '5999' }), 'PUT 2').acquirerAgreement;
      assert.equal(second.createdAt, first.createdAt, 'createdAt: when the agreement was first created');
      assert.ok(second.updatedAt > first.updatedAt, 'updatedAt: the last PUT');
      assert.equal(second.mcc, '5999');
      assert.equal(second.textOnStatement, null, 'a PUT replaces: a field left out is not carried over');
      assert.deepEqual(ok(await t.operator.get(agreementUrl(accountId)), 'GET').acquirerAgreement, second);

      const row2 = await repo().current(accountId);
      assert.ok(row2);
      assert.notEqual(row2.id, row1.id, 'a new row');
      assert.equal(row2.createdAt, row1.createdAt);
      const old = await repo().findById(row1.id);
      assert.ok(old, 'the replaced row is still found by id');
      assert.equal(old.removedAt, second.updatedAt, 'removed in the commit that wrote its successor');
      assert.deepEqual({ ...old, removedAt: null }, row1, 'nothing else of it changed');

      // Back to the sandbox: yet another row; then DELETE removes the current one only.
      const sandbox = ok(await putAgreement(t.operator, accountId, { acquirer: 'sandbox' }), 'PUT sandbox').acquirerAgreement;
      assert.equal(sandbox.createdAt, first.createdAt);
      const row3 = (await repo().current(accountId))!;
      const removed = ok(await t.operator.delete(agreementUrl(accountId)), 'DELETE').acquirerAgreement;
      assert.deepEqual(removed, sandbox);
      assert.ok((await repo().findById(row3.id))?.removedAt, 'the deleted row is kept, marked removed');
      assert.equal((await repo().findById(row2.id))?.removedAt, sandbox.updatedAt);

      // A PUT after a DELETE starts a new agreement.
      const fresh = ok(await putAgreement(t.operator, accountId, { acquirer: 'sandbox' }), 'PUT after DELETE').acquirerAgreement;
      assert.ok(fresh.createdAt > first.createdAt);
      assert.equal(fresh.updatedAt, fresh.createdAt);
    });

    test('Idempotency-Key: a replayed PUT answers the same without writing another row; DELETE likewise', async () => {
      const accountId = await createAccount(t);
      const body = { acquirer: 'clearhaus', apiKey: newApiKey(), mcc: '5999' };
      const first = await putAgreement(t.operator, accountId, body, 'agreement-put-1');
      ok(first, 'PUT');
      const rowId = (await repo().current(accountId))!.id;
      const replay = await putAgreement(t.operator, accountId, body, 'agreement-put-1');
      assert.equal(replay.status, 200);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.deepEqual(replay.body, first.body);
      assert.equal((await repo().current(accountId))!.id, rowId, 'no new row');
      const other = await putAgreement(t.operator, accountId, { ...body, mcc: '4816' }, 'agreement-put-1');
      assert.equal(other.status, 422);
      assert.equal(other.body.errorCode, 'IDEMPOTENCY_KEY_REUSED');

      const removed = await t.operator.delete(agreementUrl(accountId), { idempotencyKey: 'agreement-delete-1' });
      ok(removed, 'DELETE');
      const again = await t.operator.delete(agreementUrl(accountId), { idempotencyKey: 'agreement-delete-1' });
      assert.equal(again.status, 200);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.deepEqual(again.body, removed.body);
    });

    test('the payment engine: currentFor and credentialsOf open the key; a replaced row keeps its acquirer and key', async () => {
      const accountId = await createAccount(t);
      assert.equal(await service().currentFor(accountId), null, 'no agreement');
      const key1 = newApiKey();
      ok(await putAgreement(t.operator, accountId, { acquirer: 'clearhaus', apiKey: key1, mcc: '5411', textOnStatement: 'Corner Shop' }), 'PUT 1');
      const current1 = await service().currentFor(accountId);
      assert.ok(current1, 'a PUT of this process is seen at once (the cached "none" is dropped)');
      const row1 = (await repo().current(accountId))!;
      assert.deepEqual(current1, {
        id: row1.id,
        accountId,
        acquirer: 'clearhaus',
        mcc: '5411',
        textOnStatement: 'Corner Shop',
        apiKey: key1,
        threeDSecure: null,
      });
      assert.deepEqual(await service().credentialsOf(row1.id), current1);

      ok(await putAgreement(t.operator, accountId, { acquirer: 'sandbox' }), 'PUT sandbox');
      const current2 = await service().currentFor(accountId);
      assert.equal(current2?.acquirer, 'sandbox');
      assert.equal(current2?.apiKey, null);
      assert.equal(current2?.mcc, '5999');
      assert.notEqual(current2?.id, row1.id);
      assert.deepEqual(await service().credentialsOf(row1.id), current1, 'the row that authorized a payment keeps its acquirer and key');

      ok(await t.operator.delete(agreementUrl(accountId)), 'DELETE');
      assert.equal(await service().currentFor(accountId), null, 'a DELETE of this process is seen at once');
      assert.equal((await service().credentialsOf(current2!.id)).acquirer, 'sandbox', 'a removed row is still readable by id');
      await assert.rejects(service().credentialsOf('00000000-0000-4000-8000-000000000000'), /does not exist/);
    });

    test('threeDSecure (INTERFACE §13): sealed at rest, never in the record, opened for the payment engine', async () => {
      const accountId = await createAccount(t);
      const apiKey = newApiKey();
      const threeDSKey = newApiKey();
      const res = await putAgreement(t.operator, accountId, {
        acquirer: 'clearhaus',
        apiKey,
        mcc: '5411',
        threeDSecure: { provider: '3dsecure.io', apiKey: threeDSKey },
      });
      const record = ok(res, 'PUT with threeDSecure').acquirerAgreement;
      assert.deepEqual(Object.keys(record).sort(), AGREEMENT_KEYS, 'the record is as §12.1 says: no threeDSecure, no key');
      assert.ok(!res.text.includes(threeDSKey));
      assert.ok(!ok(await t.operator.get(agreementUrl(accountId)), 'GET').acquirerAgreement.threeDSecure);
      const row = (await repo().current(accountId))!;
      assert.equal(row.threeDSecure?.provider, '3dsecure.io');
      assert.ok(!row.threeDSecure?.apiKeySealed.includes(threeDSKey), 'sealed at rest');
      assert.deepEqual((await service().currentFor(accountId))?.threeDSecure, { provider: '3dsecure.io', apiKey: threeDSKey });
      ok(await putAgreement(t.operator, accountId, { acquirer: 'clearhaus', apiKey, mcc: '5411', threeDSecure: null }), 'PUT without');
      assert.equal((await service().currentFor(accountId))?.threeDSecure, null, 'a PUT replaces the whole agreement');
      assert.deepEqual(
        (await service().credentialsOf(row.id)).threeDSecure,
        { provider: '3dsecure.io', apiKey: threeDSKey },
        'the older row keeps its provider',
      );
    });

    test('another process sees a PUT or DELETE within CURRENT_AGREEMENT_CACHE_MS, and currentFor costs no read in between', async () => {
      const accountId = await createAccount(t);
      let wall = 1_000_000;
      let reads = 0;
      const store = t.runtime.store;
      const counting = {
        current: (id: string) => {
          reads++;
          return store.acquirerAgreements.current(id);
        },
        findById: (id: string) => store.acquirerAgreements.findById(id),
        replace: store.acquirerAgreements.replace.bind(store.acquirerAgreements),
        remove: store.acquirerAgreements.remove.bind(store.acquirerAgreements),
      };
      // A second process of the deployment: its own service (and cache) on the same database.
      const other = new AcquirerAgreementsService({
        agreements: counting,
        transaction: (fn) => store.transaction((repos) => fn(repos)),
        accounts: store.accounts,
        sealer: t.runtime.sealer,
        clock: t.runtime.clock,
        clearhausAvailable: true,
        wallNow: () => wall,
      });
      assert.equal(await other.currentFor(accountId), null);
      assert.equal(reads, 1);
      ok(await putAgreement(t.operator, accountId, { acquirer: 'sandbox', mcc: '4816' }), 'PUT elsewhere');
      wall += CURRENT_AGREEMENT_CACHE_MS - 1;
      assert.equal(await other.currentFor(accountId), null, 'still the remembered answer');
      assert.equal(reads, 1, 'no read within the second');
      wall += 1;
      assert.equal((await other.currentFor(accountId))?.mcc, '4816', 'seen once the second is over');
      assert.equal(reads, 2);
      assert.equal((await other.currentFor(accountId))?.mcc, '4816');
      assert.equal(reads, 2);
    });

    test('OpenAPI: the three operations are tagged Partner, described, operator-only, with request and response examples', async () => {
      const doc = (await t.client(null).get('/openapi.json')).body;
      const item = doc.paths[`${API}/partner/accounts/{accountId}/acquirer-agreement`];
      assert.ok(item, 'documented');
      for (const method of ['put', 'get', 'delete']) {
        const op = item[method];
        assert.ok(op, method);
        assert.deepEqual(op.tags, ['Partner'], method);
        assert.ok(op.summary.length > 10, `${method} summary`);
        assert.ok(op.description.length > 40, `${method} description`);
        assert.deepEqual(op.security, [{ operator: [] }], method);
        const response = op.responses['200'].content['application/json'];
        const examples = 'example' in response ? [response.example] : Object.values(response.examples ?? {}).map((e: any) => e.value);
        assert.ok(examples.length > 0, `${method} response example`);
        assert.ok(op.responses['404'], `${method} 404`);
      }
      const request = item.put.requestBody.content['application/json'];
      const requests = 'example' in request ? [request.example] : Object.values(request.examples ?? {}).map((e: any) => e.value);
      assert.ok(requests.some((e: any) => e.acquirer === 'clearhaus' && typeof e.apiKey === 'string'));
      assert.ok(!JSON.stringify(item.put.responses['200']).includes('apiKey'), 'the answer has no apiKey');
    });
  });
}
