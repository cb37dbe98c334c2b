/**
 * Acquirer agreements, INTERFACE §12.1, security on both stores: the operator tier only (a
 * merchant's access token or API key → 403 on every route, its own account included, nothing
 * written; no or an unknown credential → 401); the API key is sealed at rest (the row holds a
 * sealed value that opens to the key, and the key's text is nowhere in the database: not in the
 * agreement row, not in the Idempotency-Key records, not in any other table); it is in no response
 * body (PUT, GET, DELETE, replays, refusals) and in no log line (debug level, the service's own
 * logger), while the change itself is logged.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { API, startTestRuntime, type TestMerchant, type TestResponse, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { tableNames } from '../support/tables.js';
import { agreementUrl, createAccount, newApiKey, ok, putAgreement } from './support.js';

/** The spellings a key could leak in. */
const spellings = (key: string) => [key, key.toUpperCase(), key.replace(/-/g, ''), key.replace(/-/g, '').toUpperCase()];

for (const kind of await availableStores()) {
  describe(`acquirer agreements: security (${kind})`, () => {
    const logLines: string[] = [];
    const responses: TestResponse[] = [];
    const keys: string[] = [];
    let t: TestRuntime;
    let merchant: TestMerchant;
    let merchantApiKey: string;

    before(async () => {
      t = await startTestRuntime(
        kind,
        { logLevel: 'debug' },
        { startWorkers: false, clearhausAvailable: true, logDestination: { write: (line: string) => void logLines.push(line) } },
      );
      merchant = await t.createMerchant({ physical: false });
      merchantApiKey = ok(await merchant.api.post(`${API}/management/api-keys`, { name: 'agreements' }), 'api key').key;
    });
    after(() => t?.close());

    /** Every response of this suite is kept, to be searched for the keys. */
    const keep = (res: TestResponse) => {
      responses.push(res);
      return res;
    };
    const newKey = () => {
      const key = newApiKey();
      keys.push(key);
      return key;
    };

    test('a merchant credential (access token or API key) → 403 on PUT, GET and DELETE, its own account included; nothing is written', async () => {
      const key = newKey();
      for (const client of [merchant.api, t.client(merchantApiKey)]) {
        for (const accountId of [merchant.accountId, await createAccount(t)]) {
          const put = keep(await putAgreement(client, accountId, { acquirer: 'clearhaus', apiKey: key, mcc: '5999' }, `merchant-${accountId}`));
          const get = keep(await client.get(agreementUrl(accountId)));
          const del = keep(await client.delete(agreementUrl(accountId)));
          for (const res of [put, get, del]) {
            assert.equal(res.status, 403, res.text);
            assert.deepEqual(res.body, { success: false, errorCode: 'FORBIDDEN', message: 'This endpoint needs the operator key.' });
          }
          assert.equal(await t.runtime.store.acquirerAgreements.current(accountId), null);
        }
      }
      // The partner routes of accounts answer a merchant the same way.
      const accounts = await merchant.api.get(`${API}/partner/accounts/${merchant.accountId}`);
      assert.equal(accounts.status, 403);
      assert.deepEqual(accounts.body.errorCode, 'FORBIDDEN');
    });

    test('no credential or an unknown one → 401', async () => {
      const accountId = await createAccount(t);
      for (const token of [null, 'op_not-the-operator-key', merchant.token.slice(0, -2)]) {
        const client = t.client(token);
        for (const res of [
          keep(await putAgreement(client, accountId, { acquirer: 'clearhaus', apiKey: newKey(), mcc: '5999' })),
          keep(await client.get(agreementUrl(accountId))),
          keep(await client.delete(agreementUrl(accountId))),
        ]) {
          assert.equal(res.status, 401, res.text);
          assert.equal(res.body.errorCode, 'UNAUTHORIZED');
        }
      }
      assert.equal(await t.runtime.store.acquirerAgreements.current(accountId), null);
    });

    test('the key is sealed at rest: the row holds a sealed value that opens to it, and its text is in no column', async () => {
      const accountId = await createAccount(t);
      const key = newKey();
      ok(
        keep(await putAgreement(t.operator, accountId, { acquirer: 'clearhaus', apiKey: key, mcc: '5411', textOnStatement: 'Sealed Shop' }, 'sealed-1')),
        'PUT',
      );
      const { rows } = await sql<Record<string, unknown>>`select * from acquirer_agreements where account_id = ${accountId}`.execute(t.runtime.store.db);
      assert.equal(rows.length, 1);
      const row = rows[0]!;
      const sealed = String(row.apiKeySealed);
      assert.match(sealed, /^v1\./, 'a SecretBox value');
      assert.equal(t.runtime.sealer.open(sealed), key, 'it opens to the key with the vault key');
      for (const spelling of spellings(key)) assert.ok(!JSON.stringify(row).includes(spelling), `the row holds no ${spelling}`);

      // A second PUT with the same key seals it afresh (a random IV): equal keys are not visible as equal values.
      ok(keep(await putAgreement(t.operator, accountId, { acquirer: 'clearhaus', apiKey: key, mcc: '5411' })), 'PUT again');
      const both = (
        await sql<{ apiKeySealed: string }>`select api_key_sealed from acquirer_agreements where account_id = ${accountId}`.execute(t.runtime.store.db)
      ).rows;
      assert.equal(both.length, 2);
      assert.notEqual(both[0]!.apiKeySealed, both[1]!.apiKeySealed);
    });

    test('the key is in no response body: PUT, GET, DELETE, a replay and the refusals', async () => {
      const accountId = await createAccount(t);
      const key = newKey();
      const body = { acquirer: 'clearhaus', apiKey: key, mcc: '5999' };
      keep(await putAgreement(t.operator, accountId, body, 'no-echo'));
      keep(await putAgreement(t.operator, accountId, body, 'no-echo'));
      assert.equal(responses.at(-1)!.headers['idempotent-replayed'], 'true');
      keep(await putAgreement(t.operator, accountId, { ...body, mcc: '1' }, 'no-echo'));
      assert.equal(responses.at(-1)!.body.errorCode, 'IDEMPOTENCY_KEY_REUSED');
      keep(await putAgreement(t.operator, accountId, { ...body, mcc: '1' }));
      keep(await putAgreement(t.operator, accountId, { ...body, extra: key }));
      keep(await putAgreement(t.operator, accountId, { acquirer: 'sandbox', apiKey: key }));
      keep(await putAgreement(t.operator, accountId, { acquirer: 'clearhaus', apiKey: `${key}0`, mcc: '5999' }));
      keep(await t.operator.get(agreementUrl(accountId)));
      keep(await t.operator.delete(agreementUrl(accountId)));
      assert.equal(responses.at(-1)!.status, 200);
      for (const res of responses) {
        for (const k of keys) for (const spelling of spellings(k)) assert.ok(!res.text.includes(spelling), `a ${res.status} answer holds a key: ${res.text}`);
        assert.ok(!/apiKey"\s*:/.test(res.text) || res.status >= 400, `no apiKey field in a success: ${res.text}`);
      }
    });

    test('the key is nowhere in the database: not in the Idempotency-Key records, not in any table', async () => {
      const db = t.runtime.store.db;
      const idempotency = (await sql<Record<string, unknown>>`select * from idempotency_keys`.execute(db)).rows;
      assert.ok(idempotency.length > 0, 'idempotent PUTs were recorded');
      const tables = await tableNames(db, kind);
      assert.ok(tables.includes('acquirer_agreements') && tables.includes('idempotency_keys'));
      for (const table of tables) {
        const text = JSON.stringify((await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(db)).rows);
        for (const key of keys) for (const spelling of spellings(key)) assert.ok(!text.includes(spelling), `table ${table} holds a key`);
      }
    });

    test('the key is in no log line (debug level), and each change is logged without it', () => {
      assert.ok(logLines.length > 20, `${logLines.length} lines captured`);
      for (const line of logLines)
        for (const key of keys) for (const spelling of spellings(key)) assert.ok(!line.includes(spelling), `a log line holds a key: ${line}`);
      const changes = logLines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((l) => l.event === 'acquirer.changed');
      assert.ok(changes.length >= 3, `${changes.length} acquirer.changed lines`);
      for (const change of changes) {
        assert.deepEqual(
          Object.keys(change)
            .filter((k) => !['level', 'time', 'service', 'msg'].includes(k))
            .sort(),
          ['accountId', 'acquirer', 'agreementId', 'change', 'event', 'mcc'],
        );
        assert.ok(['REPLACED', 'REMOVED'].includes(String(change.change)));
      }
      assert.ok(
        logLines.some((line) => line.includes('"route":"/public/api/v1/partner/accounts/:accountId/acquirer-agreement"')),
        'the request lines are there',
      );
    });
  });
}
