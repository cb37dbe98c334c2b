/**
 * The fake Clearhaus (test/support/clearhaus-fake.ts) in a process of its own, for the benches: the
 * service's connector then talks to it over loopback as it would to Clearhaus, and the fake's CPU
 * is not the service's. Prints `{"url": …}` as its first line on stdout, then serves until closed.
 *
 *   node --import tsx bench/lib/clearhaus-fake-main.ts '{"merchants":[{"apiKey":"<uuid>"}]}'
 *   node --import tsx bench/lib/clearhaus-fake-main.ts    # one merchant with a random key, the docs' signing key
 *
 * The argument (JSON) takes the fake's options that travel as text: `merchants`, `signingKeyId`,
 * `signingPublicKeyPem` (default: the docs' 512-bit example key), `declineStatus`.
 *
 * Started by clearhaus-fake-process.ts (with an IPC channel) it answers `stats` — its CPU time and
 * what it answered since the last `stats`, by request and Clearhaus status code — and `close`. The
 * fake keeps every request it saw (for the tests' assertions); here they are summed into those
 * counts and let go every half second, so that a long bench does not grow its heap by a few KB per
 * request. The ledger (authorizations, series) is kept: MITs need the series.
 */
import crypto from 'node:crypto';
import { type ClearhausFakeOptions, type RecordedRequest, startClearhausFake } from '../../test/support/clearhaus-fake.js';

export interface FakeStats {
  /** CPU time of the fake's process since it started (user + system), µs. */
  cpuMicros: number;
  /** Requests answered since the last `stats`, by `METHOD path status code` (path ids as `:id`; code: Clearhaus `status.code`, `-` without one). */
  answered: Record<string, number>;
  /** Of the answers other than an approval: the first `status.message` of each kind, by the same key. */
  messages: Record<string, string>;
  /** Requests whose signature did not verify (`absent` on a GET is fine and not counted), since the last `stats`. */
  badSignatures: number;
  /** The body of one merchant-initiated authorization (`series[previous][id]`), as the connector sent it and signed it; null: none seen yet. */
  sampleMitBody: string | null;
}

const given = JSON.parse(process.argv[2] ?? '{}') as Pick<ClearhausFakeOptions, 'merchants' | 'signingKeyId' | 'signingPublicKeyPem' | 'declineStatus'>;
const options: ClearhausFakeOptions = { ...given, merchants: given.merchants ?? [{ apiKey: crypto.randomUUID() }] };
const fake = await startClearhausFake(options);

let answered: Record<string, number> = {};
let messages: Record<string, string> = {};
let badSignatures = 0;
let sampleMitBody: string | null = null;

const ID = /\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

function count(request: RecordedRequest): void {
  const status =
    request.reply?.body && typeof request.reply.body.status === 'object' ? (request.reply.body.status as { code?: unknown; message?: unknown }) : null;
  const code = String(status?.code ?? '-');
  const key = `${request.method} ${request.path.replace(ID, '/:id')} ${request.reply?.status ?? (request.answered ? '?' : 'unanswered')} ${code}`;
  answered[key] = (answered[key] ?? 0) + 1;
  if (code !== '20000' && messages[key] === undefined) messages[key] = typeof status?.message === 'string' ? status.message : '';
  if (request.signature !== 'valid' && !(request.method === 'GET' && request.signature === 'absent')) badSignatures++;
  if (sampleMitBody === null && request.path === '/authorizations' && request.form['series[previous][id]']) sampleMitBody = request.body;
}

/** Sums and lets go of the requests recorded so far (each is answered in the turn that recorded it: no scripts are used here). */
function fold(): void {
  const requests = fake.requests as RecordedRequest[];
  for (const request of requests) count(request);
  requests.length = 0;
}
const folding = setInterval(fold, 500);

async function close(): Promise<void> {
  clearInterval(folding);
  await fake.close();
}

process.stdout.write(`${JSON.stringify({ url: fake.url, merchants: fake.merchants.map((m) => m.apiKey) })}\n`);

if (process.send) {
  process.on('message', (message: { id: number; type: 'stats' | 'close' }) => {
    if (message.type === 'stats') {
      fold();
      const { user, system } = process.cpuUsage();
      const stats: FakeStats = { cpuMicros: user + system, answered, messages, badSignatures, sampleMitBody };
      answered = {};
      messages = {};
      badSignatures = 0;
      process.send!({ id: message.id, value: stats });
    } else if (message.type === 'close') {
      void close().then(() => process.send!({ id: message.id, value: null }, () => process.exit(0)));
    }
  });
  // The bench went away without closing it.
  process.on('disconnect', () => void close().then(() => process.exit(0)));
} else {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void close().then(() => process.exit(0)));
}
