/**
 * SIGTERM while a request is in flight on a keep-alive connection (what load balancers and most
 * clients use): the request gets its 200 with `Connection: close`, and the process exits right
 * after instead of waiting on the idle connection until the forced exit.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { test } from 'node:test';
import { API, bootstrapMerchant, freshDatabase, newKeys, sleep, startService } from '../e2e/service.js';

test('SIGTERM with an in-flight request on a keep-alive connection: the process exits once the request is done', async () => {
  const db = await freshDatabase('sqlite', 'keepalive');
  const service = await startService({
    databaseUrl: db.url,
    dir: db.dir,
    ...newKeys(),
    latencyMs: 1000,
    label: 'keepalive',
    env: { PAYMENTS_SHUTDOWN_TIMEOUT_MS: '2000' },
  });
  const agent = new http.Agent({ keepAlive: true });
  try {
    const m = await bootstrapMerchant(service);
    await service.operator.must('PATCH', `${API}/partner/accounts/${m.accountId}/capabilities`, { moto: true, syncPayout: false });
    const body = JSON.stringify({
      transaction: { pointOfSaleId: m.pointOfSaleId, amount: 100, currency: 'DKK' },
      card: { number: '4111111111111111', expiryMonth: 12, expiryYear: 2030, cvc: '123' },
    });
    const answer = new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
      const req = http.request(
        `${service.baseUrl}${API}/moto`,
        { method: 'POST', agent, headers: { authorization: `Bearer ${m.token}`, 'content-type': 'application/json' } },
        (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    await sleep(400); // the MOTO waits 1 s for the simulated acquirer
    let exited = false;
    const stopped = service.stop().then(() => (exited = true));
    const res = await answer;
    assert.equal(res.status, 200);
    await Promise.race([stopped, sleep(3000)]);
    assert.equal(res.connection, 'close');
    assert.equal(exited, true, `still running 3 s after the last request was answered (Connection: ${res.connection}); log:\n${service.logTail(5)}`);
  } finally {
    agent.destroy();
    await service.kill();
    await db.drop();
  }
});
