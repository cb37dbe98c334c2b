// Webhook receivers in their own thread, so that receiving never shares the event loop of the
// service under test: `servers` HTTP servers (one port each, on 127.0.0.1 and on ::1 when
// available, so that `localhost` works either way). Each answers 200 once a request's body has
// arrived and records when (epoch ms, sub-millisecond) with its X-Event-Id and X-Delivery-Id.
// Protocol: → {type:'ready', ports}; ← {type:'expect', count} starts a phase (counters reset);
// → {type:'done', ...} when `count` requests have arrived; ← {type:'take'} → {type:'taken', ...}
// hands over what arrived so far (a phase that timed out).
import http from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';

const { servers } = workerData;
const now = () => performance.timeOrigin + performance.now();

let expected = Number.POSITIVE_INFINITY;
let eventIds = [];
let times = [];
let deliveryIds = new Set();
let duplicates = 0;
let finished = false;

function result(type) {
  return { type, eventIds, times: Float64Array.from(times), duplicates, received: times.length };
}

const handler = (req, res) => {
  req.on('data', () => undefined);
  req.on('end', () => {
    const at = now();
    const deliveryId = String(req.headers['x-delivery-id'] ?? '');
    if (deliveryIds.has(deliveryId)) duplicates++;
    else deliveryIds.add(deliveryId);
    eventIds.push(String(req.headers['x-event-id'] ?? ''));
    times.push(at);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    if (!finished && times.length >= expected) {
      finished = true;
      parentPort.postMessage(result('done'));
    }
  });
};

const listen = (server, port, host) =>
  new Promise((resolve) => {
    server.once('error', () => resolve(null));
    server.listen(port, host, () => resolve(server.address().port));
  });

const ports = [];
for (let i = 0; i < servers; i++) {
  const v4 = http.createServer({ keepAliveTimeout: 30_000 }, handler);
  const port = await listen(v4, 0, '127.0.0.1');
  await listen(http.createServer({ keepAliveTimeout: 30_000 }, handler), port, '::1');
  ports.push(port);
}

parentPort.on('message', (m) => {
  if (m.type === 'expect') {
    expected = m.count;
    eventIds = [];
    times = [];
    deliveryIds = new Set();
    duplicates = 0;
    finished = false;
  } else if (m.type === 'take') {
    parentPort.postMessage(result('taken'));
  }
});
parentPort.postMessage({ type: 'ready', ports });
