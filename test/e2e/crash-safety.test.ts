/**
 * Crash safety, end to end: the real service as a child process takes a MIT load, is killed with
 * SIGKILL in the middle of it, and is started again on the same database. Afterwards:
 *   - every transaction whose creation was answered 200 exists exactly once, reaches a final state
 *     and gets its callback (at-least-once: repeats under one X-Delivery-Id are counted, not refused);
 *   - requests cut off by the crash, retried with their Idempotency-Key, leave one transaction each;
 *   - no transaction is authorized twice: the simulator's own ledger (PAYMENTS_SANDBOX_ACQUIRER_LOG)
 *     shows at most one authorization call per transaction per process life — a repeat only for a
 *     call the crash interrupted, answered with the same acquirer reference — and every transaction
 *     has one AUTHORIZATION operation with `authorized` equal to its amount.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { availableStores } from '../support/stores.js';
import {
  API,
  bootstrapMerchant,
  type Client,
  type E2eDatabase,
  freshDatabase,
  type Merchant,
  newKeys,
  reattach,
  type ServiceProcess,
  sleep,
  startService,
  assertExactlyOnce,
  subscribeByCit,
} from './service.js';

const VISA = '4111111111111111';
/** Load shape: single MITs from several clients at once, plus a few batches. */
const SINGLE_CLIENTS = 10;
const BATCH_CLIENTS = 2;
const BATCH_SIZE = 10;
/** Kill once this many transactions were answered (or after KILL_AFTER_MS on a busy machine). */
const KILL_AT_ANSWERED = 150;
const KILL_AFTER_MS = 15_000;
/**
 * After the restart the sandbox clock moves past the idempotency in-flight lock (5 min of service
 * time), so that requests cut off by the kill can be retried at once. The jobs the killed process
 * held come back when their wall-clock leases (15 s) run out.
 */
const ADVANCE_AFTER_RESTART_S = 310;

interface Delivery {
  deliveryId: string;
  authorization: string | undefined;
  transactionId: string;
  state: string;
}

async function startReceiver() {
  const deliveries: Delivery[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        deliveries.push({
          deliveryId: String(req.headers['x-delivery-id'] ?? ''),
          authorization: req.headers.authorization,
          transactionId: body?.transaction?.id,
          state: body?.transaction?.state,
        });
      } catch {
        deliveries.push({
          deliveryId: String(req.headers['x-delivery-id'] ?? ''),
          authorization: req.headers.authorization,
          transactionId: '(unparsable)',
          state: '',
        });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '::', resolve));
  const { port } = server.address() as AddressInfo;
  return { deliveries, url: `http://localhost:${port}/callbacks`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

interface Sent {
  key: string;
  path: string;
  body: unknown;
  /** HTTP status, or null when the connection died with the service (outcome unknown). */
  status: number | null;
  transactionIds: string[];
}

interface LedgerEntry {
  pid: number;
  transactionId: string;
  attempt: number;
  initiator: string;
  amount: number;
  outcome: string;
  acquirerReference: string | null;
}

const readLedger = (file: string): LedgerEntry[] =>
  fs.existsSync(file)
    ? fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as LedgerEntry)
    : [];

const idsOf = (res: { status: number; body: any }): string[] => {
  if (res.status !== 200) return [];
  if (res.body?.transaction) return [res.body.transaction.id];
  return (res.body?.transactions ?? []).map((r: any) => r.transaction?.id).filter(Boolean);
};

/** Every transaction of the merchant, walking the cursor pages. */
async function allTransactions(api: Client): Promise<any[]> {
  const out: any[] = [];
  let offset = '';
  for (;;) {
    const res = await api.get(`${API}/transactions?perPage=500&offset=${encodeURIComponent(offset)}`);
    assert.equal(res.status, 200, `list transactions: ${res.text}`);
    out.push(...res.body.items.map((i: any) => i.transaction));
    if (!res.body.hasMore) return out;
    offset = res.body.nextOffset;
  }
}

const FINAL = new Set(['SUCCESS', 'FAILED']);

for (const kind of await availableStores()) {
  describe(`crash safety: SIGKILL under MIT load, restart on the same database (${kind})`, { timeout: 180_000 }, () => {
    let db: E2eDatabase;
    let service: ServiceProcess | null = null;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    const keys = newKeys();
    let ledger: string;

    before(async () => {
      db = await freshDatabase(kind, 'crash');
      ledger = path.join(db.dir, 'acquirer-ledger.jsonl');
      receiver = await startReceiver();
    });
    after(async () => {
      await service?.stop();
      await receiver?.close();
      await db?.drop();
    });

    const start = (label: string) =>
      startService({ databaseUrl: db.url, dir: db.dir, ...keys, latencyMs: 20, label, env: { PAYMENTS_SANDBOX_ACQUIRER_LOG: ledger } });

    test('answered transactions survive exactly once, finish, get their callback; nothing is authorized twice', async () => {
      const t0 = Date.now();
      // --- run 1: bootstrap, store a card, MIT load, SIGKILL --------------------------------------
      const first = await start('run1');
      service = first;
      let merchant: Merchant = await bootstrapMerchant(first, 'Crash Shop');
      const subscriptionId = await subscribeByCit(first, merchant, 'crash-customer', { number: VISA, expiryMonth: 12, expiryYear: 2030, cvc: '123' });

      const sent: Sent[] = [];
      let counter = 0;
      let stop = false;
      let answeredTransactions = 0;
      const mit = (reference: string) => ({ subscriptionId, amount: 100 + (counter % 4900), currency: 'DKK', reference, notificationUrl: receiver.url });
      const send = async (record: Sent, api: Client) => {
        try {
          const res = await api.post(record.path, record.body, { 'idempotency-key': record.key });
          record.status = res.status;
          record.transactionIds = idsOf(res);
        } catch {
          record.status = null; // the service died with the request open
        }
      };
      const loop = async (batch: boolean) => {
        while (!stop) {
          const n = ++counter;
          const body = batch ? { transactions: Array.from({ length: BATCH_SIZE }, (_, i) => mit(`crash-${n}-${i}`)) } : mit(`crash-${n}`);
          const record: Sent = { key: `crash-key-${n}`, path: `${API}/mit${batch ? '/batch' : ''}`, body, status: null, transactionIds: [] };
          sent.push(record);
          await send(record, merchant.api);
          if (record.status === null) return;
          answeredTransactions += record.transactionIds.length;
        }
      };
      const loadStarted = Date.now();
      const clients = [...Array.from({ length: SINGLE_CLIENTS }, () => loop(false)), ...Array.from({ length: BATCH_CLIENTS }, () => loop(true))];
      while (answeredTransactions < KILL_AT_ANSWERED && Date.now() - loadStarted < KILL_AFTER_MS) await sleep(10);
      await first.kill();
      stop = true;
      await Promise.all(clients);
      const ledgerAtKill = readLedger(ledger);

      const answered = sent.filter((s) => s.status === 200);
      const cutOff = sent.filter((s) => s.status === null);
      const otherStatus = sent.filter((s) => s.status !== null && s.status !== 200);
      assert.deepEqual(
        otherStatus.map((s) => `${s.path}: ${s.status}`),
        [],
        'before the crash every request is answered 200',
      );
      const answeredIds = answered.flatMap((s) => s.transactionIds);
      assert.ok(answeredIds.length >= 20, `enough load before the kill (${answeredIds.length} answered)`);

      // --- run 2: same database, clock past the leases, retry what was cut off ------------------
      const second = await start('run2');
      service = second;
      merchant = reattach(merchant, second);
      await second.operator.must('POST', '/sandbox/v1/clock', { advanceSeconds: ADVANCE_AFTER_RESTART_S });
      for (const record of cutOff) {
        await send(record, merchant.api);
        assert.equal(record.status, 200, `retry of ${record.key} with its Idempotency-Key after the restart`);
      }
      const retriedIds = cutOff.flatMap((s) => s.transactionIds);
      const expected = new Set([...answeredIds, ...retriedIds]);

      // Everything reaches a final state and is called back.
      const deadline = Date.now() + 60_000;
      let transactions: any[] = [];
      for (;;) {
        transactions = (await allTransactions(merchant.api)).filter((tx) => tx.subscriptionId === subscriptionId && String(tx.reference).startsWith('crash-'));
        const byId = new Map(transactions.map((tx) => [tx.id, tx]));
        const called = new Set(receiver.deliveries.map((d) => d.transactionId));
        const open = [...expected].filter((id) => !FINAL.has(byId.get(id)?.state) || !called.has(id));
        if (open.length === 0) break;
        if (Date.now() > deadline) {
          assert.fail(
            `${open.length} transactions not final or not called back 60 s after the restart, e.g. ${open
              .slice(0, 5)
              .map((id) => `${id}:${byId.get(id)?.state ?? 'missing'}`)
              .join(', ')}\n${second.logTail(20)}`,
          );
        }
        await sleep(200);
      }

      assertExactlyOnce(transactions, expected);

      // Callbacks: each transaction one X-Delivery-Id (one callback job), ≥ 1 delivery, the final state, the POS Authorization.
      const deliveryIdsByTx = new Map<string, Set<string>>();
      for (const d of receiver.deliveries) {
        if (!deliveryIdsByTx.has(d.transactionId)) deliveryIdsByTx.set(d.transactionId, new Set());
        deliveryIdsByTx.get(d.transactionId)!.add(d.deliveryId);
        assert.equal(d.authorization, merchant.callbackAuthorization);
        assert.ok(d.deliveryId, 'X-Delivery-Id set');
      }
      const finalState = new Map(transactions.map((tx) => [tx.id, tx.state]));
      for (const d of receiver.deliveries) assert.equal(d.state, finalState.get(d.transactionId), `callback of ${d.transactionId} reports its final state`);
      for (const id of expected) assert.equal(deliveryIdsByTx.get(id)?.size, 1, `transaction ${id}: one callback (one X-Delivery-Id)`);
      const duplicateDeliveries = receiver.deliveries.length - [...deliveryIdsByTx.values()].reduce((n, s) => n + s.size, 0);

      // The acquirer's view: at most one call per transaction per process life; a repeat only across the crash,
      // with the same answer. The service's view: one AUTHORIZATION operation, `authorized` = amount.
      const entries = readLedger(ledger).filter((e) => e.initiator === 'MIT');
      const calls = new Map<string, LedgerEntry[]>();
      for (const e of entries) calls.set(e.transactionId, [...(calls.get(e.transactionId) ?? []), e]);
      let replays = 0;
      for (const [id, list] of calls) {
        assert.ok(expected.has(id), `the acquirer authorized ${id}, which the merchant never got`);
        const pids = list.map((e) => e.pid);
        assert.equal(new Set(pids).size, pids.length, `${id}: authorized more than once by one process (${JSON.stringify(list)})`);
        assert.equal(new Set(list.map((e) => e.acquirerReference)).size, 1, `${id}: one acquirer reference`);
        if (list.length > 1) {
          replays += list.length - 1;
          assert.deepEqual(pids, [first.pid, second.pid], `${id}: a repeat only after the crash`);
        }
      }
      const statesAtEnd = transactions.filter((tx) => expected.has(tx.id));
      for (const tx of statesAtEnd) {
        assert.equal(tx.state, 'SUCCESS', `${tx.id} (test card ${VISA} approves every MIT)`);
        assert.ok(calls.has(tx.id), `${tx.id} SUCCESS with an authorization on the acquirer's ledger`);
        const detail = await merchant.api.must('GET', `${API}/transactions/${tx.id}`);
        const auths = detail.operations.filter((op: any) => op.type === 'AUTHORIZATION');
        assert.equal(auths.length, 1, `${tx.id}: one AUTHORIZATION operation`);
        assert.equal(auths[0].state, 'SUCCESS');
        assert.equal(detail.aggregates.authorized, tx.amount, `${tx.id}: authorized once (aggregate = amount)`);
      }
      assert.ok(replays <= ledgerAtKill.filter((e) => e.pid === first.pid).length);

      const interruptedAtKill = answeredIds.filter((id) => !ledgerAtKill.some((e) => e.transactionId === id && e.pid === first.pid)).length;
      console.log(
        `# crash safety (${kind}): ${answeredIds.length} transactions answered before the SIGKILL ` +
          `(${answered.length} requests), ${cutOff.length} requests cut off and retried → ${retriedIds.length} transactions; ` +
          `${interruptedAtKill} answered but not yet authorized at the kill; ${expected.size} final, each listed once; ` +
          `callbacks: ${receiver.deliveries.length} deliveries, ${duplicateDeliveries} duplicate(s) under one X-Delivery-Id; ` +
          `acquirer: ${entries.length} MIT authorization calls, ${replays} repeat(s) across the crash, 0 double authorizations; ` +
          `${((Date.now() - t0) / 1000).toFixed(1)} s`,
      );
    });
  });
}
