import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { outcomeFor, SimulatorAcquirer } from '../../src/connectors/simulator/simulator.js';
import { API, startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { CARDS, motoBody, storedCardId } from './helpers.js';

/** What the simulator ignores: no agreement, statement text, IP or series. */
const noContext = { agreement: null, textOnStatement: null, clientIp: null, series: null };
const cardInstrument = (pan: string) => ({ kind: 'card' as const, pan, expiryMonth: 12, expiryYear: 2030, cvc: null, holderName: null });

describe('sandbox acquirer scenario table', () => {
  const sim = new SimulatorAcquirer(0);
  const auth = (pan: string, initiator: 'CIT' | 'MIT' | 'MOTO', attempt = 1, scaMode: string | null = null) =>
    sim.authorize({
      transactionId: 'T',
      attempt,
      amount: 100,
      currency: 'DKK',
      instrument: cardInstrument(pan),
      initiator,
      scaMode,
      capture: false,
      ...noContext,
    });

  test('4000…0341: approved for CIT and MOTO, declined for every MIT', async () => {
    assert.equal((await auth('4000000000000341', 'CIT')).outcome, 'approved');
    assert.equal((await auth('4000000000000341', 'MOTO')).outcome, 'approved');
    const mit = await auth('4000000000000341', 'MIT');
    assert.equal(mit.outcome, 'declined');
    assert.equal(mit.outcome === 'declined' && mit.errorCode, 'DECLINED_BY_ISSUER_OR_SCHEME');
    assert.equal(mit.outcome === 'declined' && mit.externalStatusCodes.acquirer, '05');
  });

  test('4000…0119: timeout on attempt 1, approved on attempt 2', async () => {
    assert.equal((await auth(CARDS.TIMEOUT_THEN_APPROVED, 'MIT', 1)).outcome, 'in_doubt');
    assert.equal(sim.isRepeatable('authorize'), true, 'the simulator answers a repeat as the first time: asked again');
    assert.equal((await auth(CARDS.TIMEOUT_THEN_APPROVED, 'MIT', 2)).outcome, 'approved');
  });

  test('4000…3220 with NORMAL/FORCE is challenged then approved; without SCA it is plain approved', async () => {
    for (const mode of ['NORMAL', 'FORCE']) {
      const r = await auth('4000000000003220', 'CIT', 1, mode);
      assert.equal(r.outcome, 'approved');
      assert.deepEqual(r.outcome === 'approved' && r.sca, { rejected: false, type: '3DS', verification: 'CHALLENGED' });
    }
    const skip = await auth('4000000000003220', 'CIT', 1, 'SKIP');
    assert.deepEqual(skip.outcome === 'approved' && skip.sca, { rejected: false, type: 'UNKNOWN', verification: 'NONE' });
  });

  test('4000…0259 authorizes but every capture is declined; unknown valid cards and wallets are approved', async () => {
    assert.equal(outcomeFor(cardInstrument(CARDS.CAPTURE_DECLINED), 'authorize', 'CIT').kind, 'approve');
    const capture = await sim.capture({
      transactionId: 'T',
      operationId: 'O',
      attempt: 1,
      amount: 1,
      currency: 'DKK',
      instrument: cardInstrument(CARDS.CAPTURE_DECLINED),
      authorizationReference: null,
      agreement: null,
      textOnStatement: null,
    });
    assert.equal(capture.outcome, 'declined');
    assert.equal((await auth('4012888888881881', 'MIT')).outcome, 'approved');
    const wallet = await sim.authorize({
      transactionId: 'T',
      attempt: 1,
      amount: 1,
      currency: 'DKK',
      instrument: { kind: 'wallet', paymentMethodType: 'KLARNA' },
      initiator: 'CIT',
      scaMode: null,
      capture: false,
      ...noContext,
    });
    assert.equal(wallet.outcome, 'approved');
  });
});

for (const kind of await availableStores()) {
  describe(`online payments, errors (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    before(async () => {
      t = await startTestRuntime(kind);
      m = await t.createMerchant();
    });
    after(() => t.close());

    const moto = (options: Parameters<typeof motoBody>[1]) => m.api.post(`${API}/moto`, motoBody(m, options));

    test('declined test cards → 200, FAILED with their error codes and raw acquirer codes', async () => {
      const declined = (await moto({ number: CARDS.DECLINED })).body;
      assert.equal(declined.transaction.state, 'FAILED');
      assert.equal(declined.transaction.errorCode, 'DECLINED_BY_ISSUER_OR_SCHEME');
      assert.equal(declined.transaction.externalStatusCodes.acquirer, '05');
      assert.deepEqual(
        declined.operations.map((o: any) => [o.type, o.state, o.errorCode]),
        [['AUTHORIZATION', 'FAILED', 'DECLINED_BY_ISSUER_OR_SCHEME']],
      );
      assert.equal(declined.aggregates.authorized, 0);
      const poor = (await moto({ number: CARDS.INSUFFICIENT_FUNDS })).body;
      assert.equal(poor.transaction.errorCode, 'INSUFFICIENT_FUNDS');
      assert.equal(poor.transaction.externalStatusCodes.acquirer, '51');
    });

    test('card rules → 422 on the card fields (Luhn, digits, expiry by the service clock, CVC)', async () => {
      const luhn = await moto({ number: '4111111111111112' });
      assert.equal(luhn.status, 422);
      assert.match(luhn.body.errors['card.number'][0], /^\[regex\]: .*Luhn/);
      assert.ok(!luhn.text.includes('4111111111111112'), 'the number is not echoed');
      const short = await moto({ number: '41111111111' });
      assert.match(short.body.errors['card.number'][0], /^\[regex\]/);
      const expired = await moto({ card: { expiryMonth: 1, expiryYear: 2020 } });
      assert.deepEqual(Object.keys(expired.body.errors), ['card.expiryYear']);
      assert.match(expired.body.errors['card.expiryYear'][0], /^\[min:\d{4}\]: the card has expired/);
      const month = await moto({ card: { expiryMonth: 13 } });
      assert.match(month.body.errors['card.expiryMonth'][0], /^\[max:12\]/);
      const cvc = await moto({ card: { cvc: '12' } });
      assert.ok(cvc.body.errors['card.cvc']);
    });

    test('missing transaction.amount → 422 [required]; an unknown point of sale → 422 on transaction.pointOfSaleId', async () => {
      const res = await m.api.post(`${API}/moto`, { transaction: { pointOfSaleId: m.onlinePointOfSaleId, currency: 'DKK' }, card: motoBody(m).card });
      assert.equal(res.status, 422);
      assert.deepEqual(res.body.errors['transaction.amount'], ['[required]: the field is required']);
      const body = motoBody(m);
      body.transaction.pointOfSaleId = randomUUID();
      const unknown = await m.api.post(`${API}/moto`, body);
      assert.equal(unknown.status, 422);
      assert.ok(unknown.body.errors['transaction.pointOfSaleId']);
    });

    test('notificationUrl off the approved domain → 422 on the field, and nothing is created', async () => {
      for (const url of ['http://example.com/cb', 'http://evillocalhost/cb', 'http://localhost.example.com/cb']) {
        const res = await moto({ notificationUrl: url });
        assert.equal(res.status, 422, url);
        assert.ok(res.body.errors['transaction.notificationUrl'], url);
      }
      const listed = (await m.api.get(`${API}/transactions?perPage=500`)).body.items;
      assert.ok(listed.every((i: any) => !String(i.transaction.notificationUrl ?? '').includes('example.com')));
    });

    test('payouts: unknown paymentMethodId → 422 on it; async payout without notificationUrl → 422 [required]', async () => {
      const unknown = await m.api.post(`${API}/payout-sync`, {
        pointOfSaleId: m.onlinePointOfSaleId,
        amount: 100,
        currency: 'DKK',
        paymentMethodId: randomUUID(),
      });
      assert.equal(unknown.status, 422);
      assert.ok(unknown.body.errors.paymentMethodId);
      const paymentMethodId = await storedCardId(m);
      const missing = await m.api.post(`${API}/payout`, { pointOfSaleId: m.onlinePointOfSaleId, amount: 100, currency: 'DKK', paymentMethodId });
      assert.equal(missing.status, 422);
      assert.deepEqual(missing.body.errors.notificationUrl, ['[required]: the field is required']);
    });

    test('a payout to a declining card → FAILED with the decline code, nothing paid out', async () => {
      const paymentMethodId = await storedCardId(m, CARDS.DECLINED);
      const res = await m.api.post(`${API}/payout-sync`, { pointOfSaleId: m.onlinePointOfSaleId, amount: 100, currency: 'DKK', paymentMethodId });
      assert.equal(res.body.transaction.state, 'FAILED');
      assert.equal(res.body.transaction.errorCode, 'DECLINED_BY_ISSUER_OR_SCHEME');
      assert.equal(res.body.aggregates.paidOut, 0);
    });

    test('unknown transaction or notification → 404 on the notification routes', async () => {
      assert.equal((await m.api.get(`${API}/transactions/AAAAAAAAAAA/notifications`)).status, 404);
      const tx = (await moto({})).body.transaction.id;
      assert.equal((await m.api.post(`${API}/transactions/${tx}/notifications/${randomUUID()}/resend`)).status, 404);
    });
  });
}
