// The merchant's callback endpoint, in its own thread (it must not share the event loop of the
// server under test): a plain keep-alive HTTP server on loopback that answers 200 at once and
// records, per request path `/<prefix>/<seq>`, when the whole request had arrived (epoch ms,
// comparable with the load generator's answer times) and whether the body reports a final state.
import http from 'node:http';
import { parentPort } from 'node:worker_threads';

const now = () => performance.timeOrigin + performance.now();

let seqs = [];
let times = [];
let prefixes = [];
let total = 0;
let notSuccess = 0;

const server = http.createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
  let text = '';
  req.setEncoding('utf8');
  req.on('data', (chunk) => (text += chunk));
  req.on('end', () => {
    const at = now();
    const [, prefix = '', seq = ''] = (req.url ?? '').split('/');
    seqs.push(seq);
    times.push(at);
    prefixes.push(prefix);
    total++;
    if (!text.includes('"state":"SUCCESS"')) notSuccess++;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '2' }).end('{}');
  });
});
server.keepAliveTimeout = 60_000;

server.listen(0, '127.0.0.1', () => {
  parentPort.postMessage({ type: 'listening', port: server.address().port });
});

parentPort.on('message', (m) => {
  if (m.type === 'take') {
    // Everything recorded since the last take.
    parentPort.postMessage({ type: 'taken', seqs, times: Float64Array.from(times), prefixes, total, notSuccess });
    seqs = [];
    times = [];
    prefixes = [];
  } else if (m.type === 'close') {
    server.closeAllConnections();
    server.close(() => parentPort.postMessage({ type: 'closed' }));
  }
});
