// Load generator in its own thread, so that it never shares the event loop of the server under
// test. autocannon drives the connections; latencies are taken from its per-response timings
// (float milliseconds from hrtime), because its own histogram keeps whole milliseconds only.
//
// A request may be a template (POST bodies, one transaction per request): `{item}` in the path,
// a header value or the body is replaced by the next of `items` (shared by every connection,
// from `itemStart`; without `wrapItems` a request made when they have run out reuses the last one
// and is counted as "items-exhausted", a failure of the run), `{seq}` by a value unique in the run
// (`tag` + a counter). With `recordAnswers`, the time of every 2xx answer is returned with its
// `{seq}` (epoch milliseconds: comparable with other threads of the process). With `expect`, a
// 2xx answer whose body does not contain that text counts as "unexpected-body".
//
// With `rate` (requests per second in all) the load is open-loop instead: requests start on a
// fixed schedule whatever the answers do (at most `connections` in flight on the connections,
// the rest wait their turn), and each latency counts from the scheduled start, so that a
// stalled server is not hidden by a load generator that waits for it (coordinated omission).
import { parentPort, workerData } from 'node:worker_threads';
import autocannon from 'autocannon';
import { Pool } from 'undici';

const {
  url,
  headers,
  connections,
  warmupSeconds,
  durationSeconds,
  method = 'GET',
  body = null,
  items = null,
  itemStart = 0,
  wrapItems = false,
  tag = 'r',
  expect = null,
  recordAnswers = false,
  rate = null,
} = workerData;

const target = new URL(url);
// URL() percent-encodes the braces of the placeholders.
const pathTemplate = (target.pathname + target.search).replace(/%7B(item|seq)%7D/gi, '{$1}');
const templated = [pathTemplate, body ?? '', ...Object.values(headers)].some((s) => s.includes('{item}') || s.includes('{seq}'));

let nextItem = itemStart;
let itemsUsed = 0;
let exhausted = 0;
let seq = 0;
let recording = false;
const answerSeqs = [];
const answerTimes = [];
let mismatches = 0;
let overloaded = false;

const now = () => performance.timeOrigin + performance.now();

function fill(text, values) {
  return text.replaceAll('{item}', values.item).replaceAll('{seq}', values.seq);
}

/** The next request's values; null when the items ran out. */
function nextValues() {
  let item = '';
  if (items) {
    if (nextItem >= items.length) {
      if (!wrapItems) return null;
      nextItem = 0;
    }
    item = items[nextItem++];
    itemsUsed++;
  }
  return { item, seq: `${tag}${++seq}` };
}

const dynamic = templated || recordAnswers || expect !== null;
const request = {
  method,
  path: pathTemplate,
  ...(body === null ? {} : { body }),
};
// Only when needed: with setupRequest autocannon builds every request anew (a fixed one is built once).
if (dynamic)
  Object.assign(request, {
    // Called for every request: the values go into the request and its context (read back in onResponse).
    setupRequest(req, context) {
      let values = nextValues();
      if (!values) {
        exhausted++;
        // Stays in the measurement as a failure: the suite must seed more items.
        values = { item: items[items.length - 1], seq: `${tag}x${seq}` };
      }
      context.seq = values.seq;
      const out = {
        ...req,
        path: fill(req.path, values),
        headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, fill(String(v), values)])),
      };
      if (typeof req.body === 'string') out.body = fill(req.body, values);
      return out;
    },
    onResponse(status, text, context) {
      if (!recording || status < 200 || status >= 300) return;
      if (expect && !text.includes(expect)) mismatches++;
      if (recordAnswers) {
        answerSeqs.push(context.seq);
        answerTimes.push(now());
      }
    },
  });

function run(seconds, record) {
  return new Promise((resolve, reject) => {
    recording = record !== null;
    const instance = autocannon(
      {
        url: `${target.origin}${pathTemplate}`,
        headers,
        connections,
        duration: seconds,
        pipelining: 1,
        requests: [request],
      },
      (err, result) => {
        if (err) reject(err);
        else resolve(result);
      },
    );
    if (record) {
      instance.on('response', (_client, statusCode, _bytes, responseTime) => {
        if (statusCode >= 200 && statusCode < 300) record.push(responseTime);
        else record.bad.set(statusCode, (record.bad.get(statusCode) ?? 0) + 1);
      });
    }
  });
}

/**
 * Open loop at `rate` requests/s; resolves when every request started in `seconds` has its
 * answer. When the answers fall more than two seconds' worth of requests behind the schedule, the
 * rate is not being served: the run stops there (`overloaded`) instead of queueing without end.
 */
async function paced(seconds, record) {
  recording = record !== null;
  overloaded = false;
  const pool = new Pool(target.origin, { connections, pipelining: 1, keepAliveTimeout: 60_000 });
  const started = performance.now();
  const total = Math.round(seconds * rate);
  const behindLimit = Math.max(2 * connections, 2 * rate);
  let sent = 0;
  let answered = 0;
  let errors = 0;
  const inFlight = new Set();
  const fire = (scheduled) => {
    const context = {};
    const built = dynamic
      ? request.setupRequest({ method, path: pathTemplate, headers: { ...headers }, body: body ?? undefined }, context)
      : { method, path: pathTemplate, headers, body: body ?? undefined };
    const promise = pool
      .request({ method: built.method, path: built.path, headers: built.headers, body: built.body })
      .then(async (res) => {
        const text = await res.body.text();
        const latency = performance.now() - scheduled;
        if (record) {
          if (res.statusCode >= 200 && res.statusCode < 300) record.push(latency);
          else record.bad.set(res.statusCode, (record.bad.get(res.statusCode) ?? 0) + 1);
        }
        if (dynamic) request.onResponse(res.statusCode, text, context);
      })
      .catch(() => {
        errors++;
      })
      .finally(() => {
        answered++;
        inFlight.delete(promise);
      });
    inFlight.add(promise);
  };
  await new Promise((resolve) => {
    const timer = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate));
      for (; sent < due; sent++) fire(started + (sent / rate) * 1000);
      if (sent - answered > behindLimit) overloaded = true;
      if (sent >= total || overloaded) {
        clearInterval(timer);
        resolve();
      }
    }, 1);
  });
  const duration = (performance.now() - started) / 1000;
  await Promise.all([...inFlight]);
  await pool.close();
  return { duration, errors, timeouts: 0 };
}

const go = rate ? paced : run;
// Warm-up: JIT, statement caches, database pages; nothing of it is kept.
if (warmupSeconds > 0) await go(warmupSeconds, null);
const samples = [];
samples.bad = new Map();
const result = await go(durationSeconds, samples);
const latencies = Float64Array.from(samples).sort();
if (mismatches) samples.bad.set('unexpected-body', mismatches);
if (exhausted) samples.bad.set('items-exhausted', exhausted);
parentPort.postMessage({
  latencies,
  durationSeconds: result.duration,
  errors: result.errors,
  timeouts: result.timeouts,
  non2xx: Object.fromEntries(samples.bad),
  itemsUsed,
  answers: recordAnswers ? { seqs: answerSeqs, times: Float64Array.from(answerTimes) } : null,
  overloaded,
});
