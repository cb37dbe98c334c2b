/**
 * Pagination (INTERFACE §6): the page envelope's arithmetic and URLs, the cursor envelope's keyset
 * walk under concurrent inserts, and the list query rules (perPage bounds, paired filters).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { cursorEnvelope, decodeCursor, encodeCursor, pageEnvelope } from '../../src/shared/pagination.js';
import { newId } from '../../src/shared/ids.js';
import { availableStores } from '../support/stores.js';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { iso, newTransaction } from './fixtures.js';

const PAGE_KEYS = [
  'firstPageUrl',
  'from',
  'items',
  'lastPage',
  'lastPageUrl',
  'nextPage',
  'nextPageUrl',
  'page',
  'path',
  'perPage',
  'previousPage',
  'previousPageUrl',
  'to',
  'total',
];
const CURSOR_KEYS = ['currentOffset', 'hasMore', 'items', 'nextOffset', 'perPage'];

describe('page envelope (unit)', () => {
  const req = (page: number, perPage: number) => ({
    page,
    perPage,
    url: 'http://x/public/api/v1/things',
    query: new URLSearchParams(`page=${page}&perPage=${perPage}&filter=a%20b`),
  });

  test('arithmetic at the start, middle, end and past the end', () => {
    const first = pageEnvelope(req(1, 2), ['a', 'b'], 5);
    assert.deepEqual(
      { ...first, items: undefined },
      {
        page: 1,
        perPage: 2,
        lastPage: 3,
        total: 5,
        from: 1,
        to: 2,
        firstPageUrl: 'http://x/public/api/v1/things?page=1&perPage=2&filter=a+b',
        lastPageUrl: 'http://x/public/api/v1/things?page=3&perPage=2&filter=a+b',
        nextPageUrl: 'http://x/public/api/v1/things?page=2&perPage=2&filter=a+b',
        previousPageUrl: null,
        path: 'http://x/public/api/v1/things',
        nextPage: 2,
        previousPage: null,
        items: undefined,
      },
    );
    const middle = pageEnvelope(req(2, 2), ['c', 'd'], 5);
    assert.deepEqual([middle.from, middle.to, middle.nextPage, middle.previousPage], [3, 4, 3, 1]);
    const last = pageEnvelope(req(3, 2), ['e'], 5);
    assert.deepEqual([last.from, last.to, last.nextPage, last.nextPageUrl, last.previousPage], [5, 5, null, null, 2]);
    const past = pageEnvelope(req(9, 2), [], 5);
    assert.deepEqual([past.from, past.to, past.nextPage, past.previousPage, past.lastPage], [null, null, null, 3, 3]);
    const empty = pageEnvelope(req(1, 25), [], 0);
    assert.deepEqual([empty.lastPage, empty.from, empty.to, empty.nextPage, empty.previousPage, empty.total], [1, null, null, null, null, 0]);
  });

  test('cursor: opaque round trip, hasMore from the extra row, garbage → 422', () => {
    const position = { createdAt: '2030-01-01T00:00:00.000Z', id: 'ABCDEFGHJKM' };
    assert.deepEqual(decodeCursor(encodeCursor(position)), position);
    assert.equal(decodeCursor(''), null);
    const rows = [1, 2, 3].map((n) => ({ createdAt: iso(n), id: String(n) }));
    const env = cursorEnvelope('', 2, rows, (r) => r);
    assert.equal(env.hasMore, true);
    assert.equal(env.items.length, 2);
    assert.deepEqual(decodeCursor(env.nextOffset!), rows[1]);
    assert.equal(cursorEnvelope('x', 3, rows, (r) => r).nextOffset, null);
    for (const bad of ['%%%', 'bm90LWpzb24', Buffer.from('[1,2]').toString('base64url'), Buffer.from('["not a date","x"]').toString('base64url')]) {
      assert.throws(
        () => decodeCursor(bad),
        (err: { code?: string; errors?: Record<string, string[]> }) => err.code === 'VALIDATION_ERROR' && Boolean(err.errors?.offset),
      );
    }
  });
});

for (const kind of await availableStores()) {
  describe(`pagination over HTTP (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    before(async () => {
      t = await startTestRuntime(kind);
      m = await t.createMerchant({ physical: false });
    });
    after(() => t.close());

    test('points of sale: exact envelope keys, arithmetic, URLs built on the public URL', async () => {
      for (let i = 0; i < 4; i++) {
        await m.api.post(`${API}/management/point-of-sales`, { name: `pos-${i}`, domain: 'localhost', webhookAuthentication: 'x' });
      }
      const first = await m.api.get(`${API}/management/point-of-sales?perPage=2`);
      assert.equal(first.status, 200);
      assert.deepEqual(Object.keys(first.body).sort(), PAGE_KEYS);
      assert.deepEqual([first.body.page, first.body.total, first.body.lastPage, first.body.from, first.body.to, first.body.nextPage], [1, 5, 3, 1, 2, 2]);
      assert.equal(first.body.path, `http://127.0.0.1:8080${API}/management/point-of-sales`);
      assert.equal(first.body.nextPageUrl, `http://127.0.0.1:8080${API}/management/point-of-sales?perPage=2&page=2`);
      assert.deepEqual(Object.keys(first.body.items[0]).sort(), ['hostedConfiguration', 'pointOfSale']);
      const seen = new Set<string>();
      for (let page = 1; page <= 3; page++) {
        const res = await m.api.get(`${API}/management/point-of-sales?perPage=2&page=${page}`);
        for (const item of res.body.items) seen.add(item.pointOfSale.id);
      }
      assert.equal(seen.size, 5, 'pages partition the list');
      const past = await m.api.get(`${API}/management/point-of-sales?perPage=2&page=7`);
      assert.equal(past.status, 200);
      assert.deepEqual([past.body.items, past.body.from, past.body.to, past.body.nextPageUrl], [[], null, null, null]);
    });

    test('an empty list: lastPage 1, from/to null', async () => {
      const res = await m.api.get(`${API}/terminals`);
      assert.deepEqual([res.body.total, res.body.lastPage, res.body.from, res.body.to, res.body.items], [0, 1, null, null, []]);
      assert.equal(res.body.perPage, 25, 'default perPage');
    });

    test('perPage and page bounds → 422 on every list', async () => {
      for (const path of ['/transactions', '/transactions/operations', '/management/point-of-sales', '/terminals']) {
        for (const [query, rule] of [
          ['perPage=0', 'min:1'],
          ['perPage=501', 'max:500'],
          ['perPage=abc', 'int'],
          ['perPage=1.5', 'int'],
        ] as const) {
          const res = await m.api.get(`${API}${path}?${query}`);
          assert.equal(res.status, 422, `${path}?${query}`);
          assert.match(res.body.errors.perPage[0], new RegExp(`^\\[${rule.replace('.', '\\.')}\\]: `));
        }
        if (path !== '/transactions') {
          const res = await m.api.get(`${API}${path}?page=0`);
          assert.deepEqual(res.body.errors, { page: ['[min:1]: must be at least 1'] });
        }
      }
      const partner = await t.operator.get(`${API}/partner/accounts?perPage=501`);
      assert.equal(partner.status, 422);
    });

    test('transactions: cursor walk over ties and concurrent inserts returns each row exactly once, newest first', async () => {
      const w = await t.createMerchant({ physical: false });
      const base = Date.parse('2029-06-01T00:00:00.000Z');
      const rows = Array.from({ length: 23 }, (_, i) =>
        newTransaction(w.accountId, w.onlinePointOfSaleId, { createdAt: iso(base + Math.floor(i / 3) * 1000), amount: i }),
      );
      await t.runtime.store.transactions.insert(rows);
      const walked: string[] = [];
      const walk = (async () => {
        let offset = '';
        for (let guard = 0; guard < 50; guard++) {
          const res = await w.api.get(`${API}/transactions?perPage=4&offset=${encodeURIComponent(offset)}`);
          assert.equal(res.status, 200, res.text);
          assert.deepEqual(Object.keys(res.body).sort(), CURSOR_KEYS);
          assert.equal(res.body.currentOffset, offset);
          for (const item of res.body.items) {
            assert.deepEqual(Object.keys(item), ['transaction']);
            walked.push(item.transaction.id);
          }
          if (!res.body.hasMore) {
            assert.equal(res.body.nextOffset, null);
            return;
          }
          offset = res.body.nextOffset;
          await new Promise((r) => setImmediate(r));
        }
      })();
      const inserts = (async () => {
        for (let i = 0; i < 10; i++) {
          await t.runtime.store.transactions.insert([newTransaction(w.accountId, w.onlinePointOfSaleId, { createdAt: iso(Date.now() + i), amount: 1000 + i })]);
          await new Promise((r) => setImmediate(r));
        }
      })();
      await Promise.all([walk, inserts]);
      const original = new Set(rows.map((r) => r.id));
      const fromOriginal = walked.filter((id) => original.has(id));
      assert.equal(new Set(walked).size, walked.length, 'no row twice');
      assert.equal(fromOriginal.length, rows.length, 'every row present when the walk began is returned');
      const expected = [...rows].sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1)).map((r) => r.id);
      assert.deepEqual(fromOriginal, expected, 'createdAt desc, then id desc');
    });

    test('transaction filters are wired from the query; paired parameters must come together', async () => {
      const f = await t.createMerchant({ physical: false });
      const pos = f.onlinePointOfSaleId;
      await t.runtime.store.transactions.insert([
        newTransaction(f.accountId, pos, { amount: 100, reference: 'inv-1', state: 'SUCCESS', createdAt: iso(Date.parse('2029-01-01T00:00:00Z')) }),
        newTransaction(f.accountId, pos, {
          amount: 250,
          reference: 'inv-2',
          state: 'FAILED',
          currency: 'EUR',
          createdAt: iso(Date.parse('2029-01-02T00:00:00Z')),
        }),
      ]);
      const amounts = async (query: string) => {
        const res = await f.api.get(`${API}/transactions?${query}`);
        assert.equal(res.status, 200, res.text);
        return res.body.items.map((i: { transaction: { amount: number } }) => i.transaction.amount);
      };
      assert.deepEqual(await amounts('amountMode=GREATER_THAN&amount=100'), [250]);
      assert.deepEqual(await amounts('reference=inv&referenceMode=PREFIX'), [250, 100]);
      assert.deepEqual(await amounts('state=SUCCESS'), [100]);
      assert.deepEqual(await amounts('currency=EUR&state=FAILED'), [250]);
      assert.deepEqual(await amounts('createdBefore=2029-01-01T12:00:00Z'), [100]);
      assert.deepEqual(await amounts(`pointOfSaleId=${newId()}`), []);
      const cases: Array<[string, Record<string, string[]>]> = [
        ['amountMode=EQUAL', { amount: ['[required]: is required when amountMode is given'] }],
        ['amount=5', { amountMode: ['[required]: is required when amount is given'] }],
        ['feeMode=LESS_THAN', { fee: ['[required]: is required when feeMode is given'] }],
        ['referenceMode=PREFIX', { reference: ['[required]: is required when referenceMode is given'] }],
        ['amountMode=SOMETIMES&amount=1', { amountMode: ['[in:EQUAL,LESS_THAN,GREATER_THAN]: must be one of EQUAL,LESS_THAN,GREATER_THAN'] }],
        ['amount=-1&amountMode=EQUAL', { amount: ['[min:0]: must be at least 0 (minor units)'] }],
        ['state=DONE', { state: ['[in:PENDING,PROCESSING,SUCCESS,FAILED]: must be one of PENDING,PROCESSING,SUCCESS,FAILED'] }],
        ['offset=not-a-cursor', { offset: ['[regex]: must be a nextOffset value returned by this list'] }],
        ['createdAfter=2029-02-01T00:00:00Z&createdBefore=2029-01-01T00:00:00Z', { createdAfter: ['[date]: must not be after createdBefore'] }],
        ['createdAfter=yesterday', { createdAfter: ['[date]: must be an RFC 3339 date-time'] }],
        ['createdAfter=2016-12-31T23:59:60Z', { createdAfter: ['[date]: must be an RFC 3339 date-time'] }],
      ];
      for (const [query, errors] of cases) {
        const res = await f.api.get(`${API}/transactions?${query}`);
        assert.equal(res.status, 422, `${query}: ${res.text}`);
        assert.equal(res.body.errorCode, 'VALIDATION_ERROR');
        assert.deepEqual(res.body.errors, errors, query);
      }
    });
  });
}
