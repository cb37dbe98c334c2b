/**
 * Signed deliveries (INTERFACE §11.10): callbacks and webhook deliveries carry the Standard Webhooks
 * headers, checked here by the reference implementation (the `standardwebhooks` package), not by our
 * own code: the point of sale's secret signs its callbacks, the webhook's its deliveries; a rotation
 * adds a second signature that the old secret verifies for 24 hours of service time, then not.
 * Also: the secrets are shown by the single-resource reads only, to their owner only, and never
 * stored in clear; a point of sale or webhook stored before signing gets its secret once, durably.
 *
 * The reference verifier checks the timestamp against Date.now() (5 minutes' tolerance); a receiver
 * of the sandbox lives on service time, so verification runs with Date.now() set to it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { DeliveryVerificationError, verifyDelivery } from '@payments-service/client';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { PointsOfSaleService } from '../../src/modules/points-of-sale/points-of-sale.service.js';
import { DEFAULT_HOSTED_CONFIGURATION } from '../../src/modules/points-of-sale/point-of-sale.js';
import { newId } from '../../src/shared/ids.js';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { tableNames } from '../support/tables.js';
import { advanceClock, type CallbackReceiver, type Hit, motoBody, startReceiver, waitFor } from '../online/helpers.js';
import { emit } from './support.js';

const SECRET = /^whsec_[A-Za-z0-9+/]+={0,2}$/;
const DAY_S = 24 * 3600;

function headersOf(hit: Hit): Record<string, string> {
  return Object.fromEntries(Object.entries(hit.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)]));
}

/** `new Webhook(secret).verify(body, headers)` as a receiver whose clock reads `nowMs`. */
function verifyAt(secret: string, hit: Hit, nowMs: number): unknown {
  const realNow = Date.now;
  Date.now = () => nowMs;
  try {
    return new Webhook(secret).verify(hit.text, headersOf(hit));
  } finally {
    Date.now = realNow;
  }
}

async function serviceNow(t: TestRuntime): Promise<number> {
  const res = await t.operator.get('/sandbox/v1/clock');
  assert.equal(res.status, 200, res.text);
  return Date.parse(res.body.now);
}

function assertSecret(secret: unknown): asserts secret is string {
  assert.equal(typeof secret, 'string');
  assert.match(secret as string, SECRET);
  const key = Buffer.from((secret as string).slice('whsec_'.length), 'base64');
  assert.ok(key.length >= 24 && key.length <= 32, `key of ${key.length} bytes`);
}

for (const kind of await availableStores()) {
  describe(`signed deliveries (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    let other: TestMerchant;
    let rx: CallbackReceiver;
    /** Every secret shown, to look for in the database afterwards. */
    const shown = new Set<string>();

    before(async () => {
      t = await startTestRuntime(kind);
      // API keys: the suite moves service time by a day, past an access token's 8 hours.
      const withKey = async (merchant: TestMerchant) => {
        const res = await merchant.api.post(`${API}/management/api-keys`, { name: 'signing' });
        assert.equal(res.status, 200, res.text);
        return { ...merchant, api: t.client(res.body.key) };
      };
      m = await withKey(await t.createMerchant({ physical: false }));
      other = await withKey(await t.createMerchant({ physical: false }));
      rx = await startReceiver();
    });
    after(async () => {
      await rx.close();
      await t.close();
    });

    /** One MOTO with a callback to a fresh path; the callback as received. */
    async function callback(pointOfSaleId = m.onlinePointOfSaleId): Promise<Hit> {
      const path = rx.newPath('cb');
      const body = motoBody(m, { notificationUrl: rx.url(path) });
      body.transaction.pointOfSaleId = pointOfSaleId;
      const res = await m.api.post(`${API}/moto`, body);
      assert.equal(res.status, 200, res.text);
      return (await waitFor(() => rx.at(path)[0], 'the callback'))!;
    }

    test('a point of sale shows its signing secret and callback Authorization to its owner: create and GET, not the list', async () => {
      const created = await m.api.post(`${API}/management/point-of-sales`, { name: 'Signed', domain: 'localhost', webhookAuthentication: 'Bearer cb-signed' });
      assert.equal(created.status, 200, created.text);
      const { pointOfSale } = created.body;
      assertSecret(pointOfSale.signingSecret);
      assert.equal(pointOfSale.webhookAuthentication, 'Bearer cb-signed');
      shown.add(pointOfSale.signingSecret);

      const got = await m.api.get(`${API}/management/point-of-sales/${pointOfSale.id}`);
      assert.equal(got.status, 200, got.text);
      assert.deepEqual(got.body, created.body);
      const list = await m.api.get(`${API}/management/point-of-sales?perPage=500`);
      assert.equal(list.status, 200, list.text);
      const item = list.body.items.find((i: any) => i.pointOfSale.id === pointOfSale.id);
      assert.ok(item);
      assert.equal(item.pointOfSale.signingSecret, undefined);
      assert.equal(item.pointOfSale.webhookAuthentication, undefined);
      assert.ok(!list.text.includes('whsec_') && !list.text.includes('Bearer cb-'), 'no credential in the list');

      const secrets = new Set<string>();
      for (let i = 0; i < 3; i++)
        secrets.add(
          (await m.api.post(`${API}/management/point-of-sales`, { name: `P${i}`, domain: 'localhost', webhookAuthentication: 'x' })).body.pointOfSale
            .signingSecret,
        );
      assert.equal(secrets.size, 3, 'each point of sale has its own secret');
      for (const s of secrets) shown.add(s);
    });

    test('another merchant: GET and rotation of the point of sale and of the webhook → 404; no credential → 401', async () => {
      const webhook = await m.api.post(`${API}/webhooks`, { url: rx.url('/tenancy'), events: ['transaction.success.v1'], secret: 'Bearer wh-tenancy' });
      assert.equal(webhook.status, 200, webhook.text);
      shown.add(webhook.body.webhook.signingSecret);
      const id = webhook.body.webhook.id;
      for (const [method, url] of [
        ['GET', `${API}/management/point-of-sales/${m.onlinePointOfSaleId}`],
        ['POST', `${API}/management/point-of-sales/${m.onlinePointOfSaleId}/signing-secret`],
        ['GET', `${API}/webhooks/${id}`],
        ['POST', `${API}/webhooks/${id}/signing-secret`],
      ] as const) {
        const res = await other.api.request(method, url);
        assert.equal(res.status, 404, `${method} ${url}: ${res.text}`);
        assert.equal(res.body.errorCode, 'NOT_FOUND');
        assert.ok(!res.text.includes('whsec_'));
        const anonymous = await t.client(null).request(method, url);
        assert.equal(anonymous.status, 401, `${method} ${url} without a credential`);
      }
      const mine = await m.api.get(`${API}/management/point-of-sales/${m.onlinePointOfSaleId}`);
      assert.equal(mine.status, 200, 'the rotation attempts of the other merchant changed nothing visible');
    });

    test('a callback carries webhook-id (= X-Delivery-Id), webhook-timestamp and a signature the point of sale secret verifies', async () => {
      const pos = (await m.api.get(`${API}/management/point-of-sales/${m.onlinePointOfSaleId}`)).body.pointOfSale;
      assertSecret(pos.signingSecret);
      shown.add(pos.signingSecret);
      const hit = await callback();
      const now = await serviceNow(t);
      assert.equal(hit.headers['webhook-id'], hit.headers['x-delivery-id']);
      assert.equal(hit.headers.authorization, pos.webhookAuthentication, 'the static Authorization stays');
      const timestamp = Number(hit.headers['webhook-timestamp']);
      assert.ok(Number.isInteger(timestamp) && Math.abs(timestamp * 1000 - now) < 30_000, `timestamp ${timestamp} vs service time ${now}`);
      assert.match(String(hit.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]+={0,2}$/, 'one signature outside a rotation');
      assert.deepEqual(verifyAt(pos.signingSecret, hit, now), hit.body);
      // The typed client's verifier agrees on the real delivery.
      verifyDelivery(hit.text, hit.headers, pos.signingSecret, { now });
      const otherPos = (await other.api.get(`${API}/management/point-of-sales/${other.onlinePointOfSaleId}`)).body.pointOfSale;
      assert.throws(() => verifyAt(otherPos.signingSecret, hit, now), WebhookVerificationError, "another point of sale's secret does not verify it");
      const tampered = { ...hit, text: hit.text.replace('"amount":1000', '"amount":1001') };
      assert.notEqual(tampered.text, hit.text);
      assert.throws(() => verifyAt(pos.signingSecret, tampered, now), WebhookVerificationError);
    });

    test('webhook: the secret is shown on create and GET (not the list); deliveries verify with it', async () => {
      const path = rx.newPath('wh');
      const created = await m.api.post(`${API}/webhooks`, { url: rx.url(path), events: ['transaction.captured.v1'], secret: 'Bearer wh-1' });
      assert.equal(created.status, 200, created.text);
      const { webhook } = created.body;
      assertSecret(webhook.signingSecret);
      shown.add(webhook.signingSecret);
      const got = await m.api.get(`${API}/webhooks/${webhook.id}`);
      assert.deepEqual(got.body, created.body);
      const list = await m.api.get(`${API}/webhooks?perPage=500`);
      assert.equal(list.status, 200);
      assert.ok(!list.text.includes('whsec_'), 'no signing secret in the list');

      await emit(t, m, 'transaction.captured.v1', { transaction: { id: 'SIGNED00001' } });
      const hit = (await waitFor(() => rx.at(path)[0], 'the delivery'))!;
      assert.equal(hit.headers['webhook-id'], hit.headers['x-delivery-id']);
      assert.equal(hit.headers.authorization, 'Bearer wh-1');
      assert.deepEqual(verifyAt(webhook.signingSecret, hit, await serviceNow(t)), {
        event: 'transaction.captured.v1',
        data: { transaction: { id: 'SIGNED00001' } },
      });
    });

    test('a point of sale or webhook stored before signing gets one secret on first need, the same for every reader', async () => {
      const { store, sealer, clock } = t.runtime;
      const now = clock.nowIso();
      const posId = newId();
      await store.pointsOfSale.insert(
        {
          id: posId,
          accountId: m.accountId,
          name: 'Old',
          type: 'ONLINE',
          domain: 'localhost',
          descriptor: null,
          hostedConfiguration: DEFAULT_HOSTED_CONFIGURATION,
          createdAt: now,
          updatedAt: now,
        },
        sealer.seal('Bearer old-pos'),
      );
      // Readers racing: API GETs, a second service (another process's view of the same store) and a callback.
      const secondProcess = new PointsOfSaleService({ pointsOfSale: store.pointsOfSale, clock, sealer });
      const [a, b, c, d] = await Promise.all([
        m.api.get(`${API}/management/point-of-sales/${posId}`),
        m.api.get(`${API}/management/point-of-sales/${posId}`),
        secondProcess.detail(m.accountId, posId),
        secondProcess.signingSecrets(m.accountId, posId),
      ]);
      assertSecret(a.body.pointOfSale.signingSecret);
      assert.equal(a.body.pointOfSale.webhookAuthentication, 'Bearer old-pos');
      assert.equal(b.body.pointOfSale.signingSecret, a.body.pointOfSale.signingSecret);
      assert.equal(c.signingSecret, a.body.pointOfSale.signingSecret);
      assert.equal(d!.current, a.body.pointOfSale.signingSecret);
      shown.add(a.body.pointOfSale.signingSecret);
      const hit = await callback(posId);
      verifyAt(a.body.pointOfSale.signingSecret, hit, await serviceNow(t));

      const path = rx.newPath('old-wh');
      const webhookId = newId();
      await store.webhooks.insert(
        {
          id: webhookId,
          accountId: m.accountId,
          url: rx.url(path),
          events: ['transaction.voided.v1'],
          pausedAt: null,
          pauseReason: null,
          resumedAt: null,
          createdAt: now,
          updatedAt: now,
        },
        sealer.seal('Bearer old-wh'),
      );
      await emit(t, m, 'transaction.voided.v1');
      const delivered = (await waitFor(() => rx.at(path)[0], 'the delivery of the old webhook'))!;
      const got = await m.api.get(`${API}/webhooks/${webhookId}`);
      assertSecret(got.body.webhook.signingSecret);
      shown.add(got.body.webhook.signingSecret);
      verifyAt(got.body.webhook.signingSecret, delivered, await serviceNow(t));
      assert.equal((await m.api.get(`${API}/webhooks/${webhookId}`)).body.webhook.signingSecret, got.body.webhook.signingSecret);
    });

    test('rotation: Idempotency-Key replays the same secret; old and new both verify for 24 h of service time, then only the new', async () => {
      const webhookPath = rx.newPath('rot-wh');
      const webhook = (await m.api.post(`${API}/webhooks`, { url: rx.url(webhookPath), events: ['transaction.refunded.v1'], secret: 'Bearer wh-rot' })).body
        .webhook;
      const oldPos = (await m.api.get(`${API}/management/point-of-sales/${m.onlinePointOfSaleId}`)).body.pointOfSale.signingSecret as string;
      const oldWebhook = webhook.signingSecret as string;

      const rotate = (url: string, key: string) => m.api.post(url, undefined, { idempotencyKey: key });
      const posUrl = `${API}/management/point-of-sales/${m.onlinePointOfSaleId}/signing-secret`;
      const rotated = await rotate(posUrl, 'rot-pos-1');
      assert.equal(rotated.status, 200, rotated.text);
      const newPos = rotated.body.pointOfSale.signingSecret;
      assertSecret(newPos);
      assert.notEqual(newPos, oldPos);
      assert.ok(rotated.body.pointOfSale.webhookAuthentication && rotated.body.hostedConfiguration, 'the resource with the new secret');
      const replay = await rotate(posUrl, 'rot-pos-1');
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.deepEqual(replay.body, rotated.body, 'a replay rotates nothing');
      assert.equal((await m.api.get(`${API}/management/point-of-sales/${m.onlinePointOfSaleId}`)).body.pointOfSale.signingSecret, newPos);

      const webhookRotated = await rotate(`${API}/webhooks/${webhook.id}/signing-secret`, 'rot-wh-1');
      assert.equal(webhookRotated.status, 200, webhookRotated.text);
      const newWebhook = webhookRotated.body.webhook.signingSecret;
      assertSecret(newWebhook);
      assert.notEqual(newWebhook, oldWebhook);
      assert.equal(webhookRotated.body.webhook.id, webhook.id);
      assert.deepEqual((await rotate(`${API}/webhooks/${webhook.id}/signing-secret`, 'rot-wh-1')).body, webhookRotated.body);
      for (const s of [oldPos, newPos, oldWebhook, newWebhook]) shown.add(s);

      let delivered = 0;
      const webhookDelivery = async () => {
        await emit(t, m, 'transaction.refunded.v1');
        delivered += 1;
        return (await waitFor(() => rx.at(webhookPath)[delivered - 1], `webhook delivery ${delivered}`))!;
      };

      // During the rotation: two signatures; a receiver with either secret verifies.
      for (const hit of [await callback(), await webhookDelivery()]) {
        const now = await serviceNow(t);
        const [current, previous] = hit.path.startsWith('/cb') ? [newPos, oldPos] : [newWebhook, oldWebhook];
        assert.equal(String(hit.headers['webhook-signature']).split(' ').length, 2, 'two signatures during a rotation');
        verifyAt(current, hit, now);
        verifyAt(previous, hit, now);
      }

      // Just before the 24 hours end, the old secret still signs.
      await advanceClock(t, DAY_S - 120);
      for (const hit of [await callback(), await webhookDelivery()]) {
        const [current, previous] = hit.path.startsWith('/cb') ? [newPos, oldPos] : [newWebhook, oldWebhook];
        const now = await serviceNow(t);
        verifyAt(current, hit, now);
        verifyAt(previous, hit, now);
      }

      // After them, only the new one.
      await advanceClock(t, 180);
      for (const hit of [await callback(), await webhookDelivery()]) {
        const [current, previous] = hit.path.startsWith('/cb') ? [newPos, oldPos] : [newWebhook, oldWebhook];
        const now = await serviceNow(t);
        assert.equal(String(hit.headers['webhook-signature']).split(' ').length, 1, `${hit.path}: one signature after 24 h`);
        verifyAt(current, hit, now);
        assert.throws(() => verifyAt(previous, hit, now), /No matching signature found/, `${hit.path}: the old secret no longer verifies`);
        verifyDelivery(hit.text, hit.headers, current, { now });
        assert.throws(() => verifyDelivery(hit.text, hit.headers, previous, { now }), DeliveryVerificationError);
      }
    });

    test('a second rotation within the day: the secret it replaces keeps signing, the one before stops', async () => {
      const url = `${API}/management/point-of-sales/${m.onlinePointOfSaleId}/signing-secret`;
      const first = (await m.api.post(url)).body.pointOfSale.signingSecret;
      const second = (await m.api.post(url)).body.pointOfSale.signingSecret;
      const third = (await m.api.post(url)).body.pointOfSale.signingSecret;
      for (const s of [first, second, third]) shown.add(s);
      assert.equal(new Set([first, second, third]).size, 3);
      const hit = await callback();
      const now = await serviceNow(t);
      verifyAt(third, hit, now);
      verifyAt(second, hit, now);
      assert.throws(() => verifyAt(first, hit, now), WebhookVerificationError);
    });

    test('no secret in clear in any row of any table (idempotent replays included)', async () => {
      const db = t.runtime.store.db;
      assert.ok(shown.size >= 10, `${shown.size} secrets shown`);
      for (const table of await tableNames(db, kind)) {
        const rows = await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(db);
        const text = JSON.stringify(rows.rows, (_k, v) => (typeof v === 'bigint' ? String(v) : Buffer.isBuffer(v) ? v.toString('base64') : v));
        for (const secret of shown) {
          assert.ok(!text.includes(secret.slice('whsec_'.length)), `a signing secret in clear in ${table}`);
        }
      }
    });
  });
}
