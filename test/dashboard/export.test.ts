/**
 * The dashboard's CSV export (src/dashboard/csv-export.ts) and overview figures
 * (dashboard/src/figures.ts): unit rules, and the streamed export over HTTP on both stores —
 * the session's own payments only, filters applied, refusals in the API's error shape.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { csvField, csvStream, type ListPage } from '../../src/dashboard/csv-export.js';
import { SESSION_COOKIE } from '../../src/dashboard/session.js';
import { summarize } from '../../dashboard/src/figures.js';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { motoBody } from '../online/helpers.js';

async function text(stream: AsyncIterable<unknown>): Promise<string> {
  let out = '';
  for await (const chunk of stream) out += String(chunk);
  return out;
}

describe('CSV export and overview figures (unit)', () => {
  test('fields: quoted when needed, formulas neutralised, null empty', () => {
    assert.equal(csvField('plain'), 'plain');
    assert.equal(csvField('a,b'), '"a,b"');
    assert.equal(csvField('say "hi"'), '"say ""hi"""');
    assert.equal(csvField('line\nbreak'), '"line\nbreak"');
    assert.equal(csvField('=HYPERLINK("x")'), `"'=HYPERLINK(""x"")"`);
    assert.equal(csvField('-1'), "'-1");
    assert.equal(csvField(null), '');
    assert.equal(csvField(1000), '1000');
  });

  test('stream: walks every page with the filters, waits out a 429, stops at the last page', async () => {
    const asked: string[] = [];
    const waits: number[] = [];
    const pages: ListPage[] = [
      { status: 200, headers: {}, body: { items: [{ transaction: { id: 'A', amount: 1 } }], hasMore: true, nextOffset: 'c1' } },
      { status: 429, headers: { 'retry-after': '2' }, body: {} },
      { status: 200, headers: {}, body: { items: [{ transaction: { id: 'B', amount: 2 } }], hasMore: false, nextOffset: null } },
    ];
    const stream = await csvStream(
      new URLSearchParams('state=SUCCESS&perPage=3&offset=zzz&bogus=1'),
      async (q) => {
        asked.push(q.toString());
        return pages.shift()!;
      },
      async (ms) => {
        waits.push(ms);
      },
    );
    const csv = await text(stream);
    const lines = csv.trimEnd().split('\r\n');
    assert.equal(lines.length, 3);
    assert.match(lines[0]!, /^id,createdAt,/);
    assert.match(lines[1]!, /^A,/);
    assert.match(lines[2]!, /^B,/);
    assert.deepEqual(asked, ['state=SUCCESS&perPage=500', 'state=SUCCESS&perPage=500&offset=c1', 'state=SUCCESS&perPage=500&offset=c1']);
    assert.deepEqual(waits, [2000]);
  });

  test('stream: a refused first page rejects before anything is written', async () => {
    await assert.rejects(
      csvStream(new URLSearchParams(), async () => ({ status: 422, headers: {}, body: { message: 'bad' } })),
      (e: Error & { page?: ListPage }) => e.page?.status === 422,
    );
  });

  test('overview figures: per day, success rate, decline reasons, methods and currencies', () => {
    const tx = (day: string, state: string, amount: number, currency = 'DKK', errorCode: string | null = null) =>
      ({ id: `${day}${amount}`, createdAt: `${day}T10:00:00.000Z`, state, amount, currency, errorCode, paymentMethodType: 'CARD' }) as never;
    const f = summarize([
      tx('2026-11-01', 'SUCCESS', 1000),
      tx('2026-11-01', 'FAILED', 500, 'DKK', 'INSUFFICIENT_FUNDS'),
      tx('2026-11-02', 'SUCCESS', 250, 'EUR'),
      tx('2026-11-02', 'FAILED', 100, 'DKK', 'INSUFFICIENT_FUNDS'),
      tx('2026-11-02', 'FAILED', 100, 'DKK', 'CARD_EXPIRED'),
      tx('2026-11-02', 'PENDING', 100),
    ]);
    assert.equal(f.total, 6);
    assert.equal(f.successRate, 2 / 5);
    assert.deepEqual(
      f.days.map((d) => [d.day, d.count, d.succeeded, d.failed, d.volume]),
      [
        ['2026-11-01', 2, 1, 1, { DKK: 1000 }],
        ['2026-11-02', 4, 1, 2, { EUR: 250 }],
      ],
    );
    assert.deepEqual(f.declines, [
      ['INSUFFICIENT_FUNDS', 2],
      ['CARD_EXPIRED', 1],
    ]);
    assert.deepEqual(f.byMethod, [['CARD', 6]]);
    assert.deepEqual(f.byCurrency, [
      ['DKK', 5, 1000],
      ['EUR', 1, 250],
    ]);
    assert.equal(summarize([]).successRate, null);
  });
});

for (const kind of await availableStores()) {
  describe(`CSV export over HTTP (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    let cookie: string;
    before(async () => {
      t = await startTestRuntime(kind, {}, { startWorkers: false });
      m = await t.createMerchant({ physical: false });
      const other = await t.createMerchant({ physical: false });
      for (const [who, reference, number] of [
        [m, 'csv, "quoted"', '4111111111111111'],
        [m, 'csv-2', '4111111111111111'],
        [m, 'csv-declined', '4000000000000002'],
        [other, 'not-yours', '4111111111111111'],
      ] as const) {
        const body = motoBody(who, { amount: 1200, number });
        body.transaction.reference = reference;
        assert.equal((await who.api.post(`${API}/moto`, body)).status, 200);
      }
      const res = await t.runtime.app.inject({
        method: 'POST',
        url: '/dashboard/api/session',
        headers: { 'content-type': 'application/json' },
        payload: { key: m.token },
      });
      cookie = String(res.headers['set-cookie']).split(';')[0]!;
    });
    after(() => t.close());

    const get = (url: string, withCookie = true) => t.runtime.app.inject({ method: 'GET', url, headers: withCookie ? { cookie } : {} });

    test('the whole filtered list of the session merchant, as an attachment', async () => {
      const all = await get('/dashboard/api/transactions.csv');
      assert.equal(all.statusCode, 200, all.body);
      assert.match(String(all.headers['content-type']), /^text\/csv/);
      assert.match(String(all.headers['content-disposition']), /^attachment; filename="payments-\d{4}-\d{2}-\d{2}\.csv"$/);
      const lines = all.body.trimEnd().split('\r\n');
      assert.equal(lines.length, 4, all.body);
      assert.ok(all.body.includes('"csv, ""quoted"""'));
      assert.ok(!all.body.includes('not-yours'));
      assert.ok(!all.body.includes('4111111111111111'), 'no card number');

      const ok = await get('/dashboard/api/transactions.csv?state=SUCCESS');
      assert.equal(ok.body.trimEnd().split('\r\n').length, 3);
      assert.ok(!ok.body.includes('csv-declined'));
    });

    test('not signed in: 401; a bad filter: 422 in the API shape', async () => {
      const anon = await get('/dashboard/api/transactions.csv', false);
      assert.equal(anon.statusCode, 401);
      assert.equal(anon.json().errorCode, 'UNAUTHORIZED');
      const bad = await get('/dashboard/api/transactions.csv?state=NOPE');
      assert.equal(bad.statusCode, 422);
      assert.equal(bad.json().errorCode, 'VALIDATION_ERROR');
      assert.equal(SESSION_COOKIE, cookie.split('=')[0]);
    });
  });
}
