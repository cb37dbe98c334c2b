/**
 * The Clearhaus HTTP client: one undici Pool for the configured base URL, HTTP Basic with the
 * merchant's API key, every POST signed over the exact body bytes, a deadline per request and a
 * bound on requests in flight (clearhaus.md §1, INTERFACE §12.2–12.4).
 *
 * It answers what happened on the wire, never a decision about money:
 *   answered    — a HAL body with a `status.code`, whatever the HTTP status (201, 200 and 400 alike);
 *   key_refused — HTTP 401 (the merchant's API key was refused); not_found — HTTP 404;
 *   not_sent    — provably never written: still waiting for a free slot, or failed before undici
 *                 handed the request to a connected socket (refused, DNS, TLS, connect timeout);
 *   in_doubt    — written (or possibly written) and no usable answer: deadline, reset or close
 *                 after the write, HTTP 5xx, an unreadable body.
 * "Written" is observed, not guessed from error codes: undici calls `onConnect` on a connected
 * (and, for https, handshaken) socket immediately before it writes the request, so any failure
 * before that call is a request that never left.
 *
 * Every request goes on a fresh connection (`connection: close`): a request written to a kept-alive
 * socket that the server is closing at that instant fails in a way that cannot be told apart from
 * one the server received — in doubt, i.e. a payment lost — while a new connection makes "never
 * written" provable. Clearhaus closed its connections after each answer anyway (the 2015 recording
 * in clearhaus.md §1.5 carries `Connection: Close`).
 */
import { type Dispatcher, Pool } from 'undici';
import type { SigningKey } from './signing.js';

export interface ClearhausClientOptions {
  /** e.g. `https://gateway.test.clearhaus.com` (a path prefix, if any, is kept). */
  baseUrl: string;
  /** The partner's signing API key id (CLEARHAUS_SIGNING_KEY_ID). */
  signingKeyId: string;
  signingKey: SigningKey;
  /** The whole of one request, from the call to the last byte of the answer, waiting for a slot included (ms). */
  timeoutMs: number;
  /** Requests on the wire at once; the rest wait in arrival order. */
  maxInFlight: number;
  /** A dispatcher to use instead of the client's own Pool (tests); the client does not close it. */
  dispatcher?: Dispatcher;
}

export type WireAnswer =
  | { kind: 'answered'; httpStatus: number; code: number; id: string | null; message: string | null; body: Record<string, unknown> }
  | { kind: 'key_refused' }
  | { kind: 'not_found' }
  | { kind: 'not_sent'; reason: string }
  | { kind: 'in_doubt'; reason: string; id: string | null };

export interface ClearhausAccount {
  /** 15 digits, leading zeros kept (3-D Secure needs them). */
  merchantId: string;
  /** The default text on statement. */
  descriptor: string;
  name: string;
  country: string;
  /** The funding currency; the docs' example leaves it out, so it may be unknown. */
  currency: string | null;
  mcc: string;
  /** The acquirer BINs, for 3-D Secure. */
  acquirer: { visaBin: string | null; mastercardBin: string | null };
}

export type AccountLookup =
  { ok: true; account: ClearhausAccount } | { ok: false; error: 'key_refused' | 'not_found' | 'unreachable' | 'no_answer' | 'bad_answer'; message: string };

/** Media types read as a HAL answer (matched as prefixes, parameters such as `version` ignored). */
const HAL_TYPES = ['application/vnd.clearhaus-gateway.hal+json', 'application/hal+json', 'application/json'];
/** The most of an answer read: Clearhaus answers are about a kilobyte. */
const MAX_ANSWER_BYTES = 1024 * 1024;

/** A first-in, first-out bound on requests in flight. A place given up before its turn never held a slot. */
class InFlightLimit {
  private active = 0;
  private readonly queue: Array<{ grant: () => void; refuse: () => void }> = [];

  constructor(private readonly max: number) {}

  get inFlight(): number {
    return this.active;
  }

  get waiting(): number {
    return this.queue.length;
  }

  /**
   * `grant` runs once a slot is held (at once when one is free), `refuse` if the queue is shut
   * first. `cancel()` gives the place up; false when the slot was already granted.
   */
  enter(grant: () => void, refuse: () => void): { cancel: () => boolean } {
    if (this.active < this.max) {
      this.active++;
      grant();
      return { cancel: () => false };
    }
    const waiter = { grant, refuse };
    this.queue.push(waiter);
    return {
      cancel: () => {
        const at = this.queue.indexOf(waiter);
        if (at < 0) return false;
        this.queue.splice(at, 1);
        return true;
      },
    };
  }

  /**
   * A slot given back passes straight to the longest waiter, if any. The waiter starts in a
   * microtask: a slot is given back from inside undici's callbacks, which should not dispatch anew.
   */
  leave(): void {
    const next = this.queue.shift();
    if (next) queueMicrotask(next.grant);
    else this.active--;
  }

  /** Refuses every waiter (shutdown). */
  shut(): void {
    for (const waiter of this.queue.splice(0, this.queue.length)) waiter.refuse();
  }
}

type Exchange =
  { kind: 'response'; status: number; contentType: string | null; body: Buffer } | { kind: 'not_sent'; reason: string } | { kind: 'in_doubt'; reason: string };

const ERROR_PHRASES: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'DNS lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  UND_ERR_CONNECT_TIMEOUT: 'connect timeout',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection closed while writing',
  UND_ERR_SOCKET: 'connection closed',
  UND_ERR_CLOSED: 'client closed',
  UND_ERR_DESTROYED: 'client destroyed',
  UND_ERR_HEADERS_TIMEOUT: 'no answer headers in time',
  UND_ERR_BODY_TIMEOUT: 'answer body stalled',
};

/** A failure as code and phrase only: messages of lower layers are not quoted (they could carry anything). */
function describeError(err: unknown): string {
  const e = err as { code?: unknown; name?: unknown; cause?: { code?: unknown } } | null;
  const raw = e?.code ?? e?.cause?.code ?? e?.name;
  const code = typeof raw === 'string' && /^[A-Za-z0-9_]{1,64}$/.test(raw) ? raw : 'ERROR';
  const tls = /^(ERR_TLS|ERR_SSL)|CERT|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code);
  const phrase = ERROR_PHRASES[code] ?? (tls ? 'TLS handshake failed' : 'transport error');
  return `${phrase} (${code})`;
}

function headerValue(rawHeaders: Buffer[] | string[], name: string): string | null {
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (String(rawHeaders[i]).toLowerCase() === name) return String(rawHeaders[i + 1]);
  }
  return null;
}

/** The answer as a JSON object when its media type is HAL or JSON, else null. */
function parseHal(contentType: string | null, body: Buffer): Record<string, unknown> | null {
  const type = contentType?.trim().toLowerCase() ?? '';
  if (!HAL_TYPES.some((accepted) => type.startsWith(accepted))) return null;
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const asObject = (value: unknown): Record<string, unknown> | null =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;

const nonEmptyString = (value: unknown): string | null => (typeof value === 'string' && value.length > 0 ? value : null);

/** `status.code` as an integer (a digit string is read too), or null. */
function statusCodeOf(body: Record<string, unknown>): number | null {
  const code = asObject(body.status)?.code;
  if (typeof code === 'number' && Number.isInteger(code)) return code;
  if (typeof code === 'string' && /^[0-9]{5}$/.test(code)) return Number(code);
  return null;
}

export class ClearhausClient {
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly origin: string;
  private readonly basePath: string;
  private readonly limit: InFlightLimit;
  private readonly maxInFlight: number;
  private closed = false;
  /** Settles once the latest POST so far has its signature and has taken its place (see post). */
  private lastInLine: Promise<void> = Promise.resolve();
  private closing: Promise<void> | null = null;

  constructor(private readonly options: ClearhausClientOptions) {
    if (!Number.isInteger(options.maxInFlight) || options.maxInFlight < 1) throw new RangeError('maxInFlight must be a whole number ≥ 1');
    if (!Number.isFinite(options.timeoutMs) || options.timeoutMs <= 0) throw new RangeError('timeoutMs must be > 0');
    const url = new URL(options.baseUrl);
    this.origin = url.origin;
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.limit = new InFlightLimit(options.maxInFlight);
    this.maxInFlight = options.maxInFlight;
    this.ownsDispatcher = options.dispatcher === undefined;
    this.dispatcher =
      options.dispatcher ??
      new Pool(this.origin, {
        connections: options.maxInFlight,
        connect: { timeout: options.timeoutMs },
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
      });
  }

  /** Requests on the wire now, and requests waiting for a slot (for metrics and tests). */
  get inFlight(): number {
    return this.limit.inFlight;
  }

  get queued(): number {
    return this.limit.waiting;
  }

  /**
   * Requests it takes at once: `maxInFlight` on the wire and a line of half as many waiting in
   * memory for a slot. A payment between its at-most-once record and its send holds a place
   * without using the wire; without the line, a busy connector turned such gaps into deferred jobs
   * (a database write and 200 ms each), which fed on themselves under load.
   */
  get capacity(): number {
    return this.maxInFlight + Math.ceil(this.maxInFlight / 2);
  }

  /** Every place is taken: the wire and its line. */
  get saturated(): boolean {
    return this.limit.inFlight + this.limit.waiting >= this.capacity;
  }

  /**
   * A signed form POST (`body` already encoded; the empty string for a void). Signatures are made
   * off the event loop, several at once, but requests take their place in the line in the order
   * of the calls: each waits for its own signature and for the place of the call before it.
   */
  async post(path: string, body: string, apiKey: string): Promise<WireAnswer> {
    const bytes = Buffer.from(body, 'utf8');
    // Ready once its own signature and the call before it are: places are taken in call order.
    const signing = this.options.signingKey.signOffLoop(bytes);
    const before = this.lastInLine;
    const signed = Promise.all([signing, before]);
    this.lastInLine = Promise.allSettled([signing, before]).then(() => undefined);
    let signature: string;
    try {
      [signature] = await signed;
    } catch (err) {
      return { kind: 'not_sent', reason: `the request could not be signed (${describeError(err)})` };
    }
    const headers = {
      authorization: basicAuthorization(apiKey),
      'content-type': 'application/x-www-form-urlencoded',
      accept: '*/*',
      signature: `${this.options.signingKeyId} RS256-hex ${signature}`,
    };
    return toWireAnswer(await this.exchange('POST', path, headers, bytes));
  }

  /** `GET /account`: the merchant account behind an API key. */
  async account(apiKey: string): Promise<AccountLookup> {
    const exchange = await this.exchange('GET', '/account', { authorization: basicAuthorization(apiKey), accept: '*/*' }, null);
    if (exchange.kind === 'not_sent') return { ok: false, error: 'unreachable', message: `Clearhaus could not be reached: ${exchange.reason}.` };
    if (exchange.kind === 'in_doubt') return { ok: false, error: 'no_answer', message: `Clearhaus did not answer: ${exchange.reason}.` };
    if (exchange.status === 401) return { ok: false, error: 'key_refused', message: 'Clearhaus refused the API key (HTTP 401).' };
    if (exchange.status === 404) return { ok: false, error: 'not_found', message: 'Clearhaus has no account resource (HTTP 404).' };
    const hal = exchange.status === 200 ? parseHal(exchange.contentType, exchange.body) : null;
    const account = hal ? accountOf(hal) : null;
    if (!account) return { ok: false, error: 'bad_answer', message: `Clearhaus answered HTTP ${exchange.status} without a readable account.` };
    return { ok: true, account };
  }

  /** Answers every request still waiting for a slot not_sent, then closes the pool once the requests on the wire have ended. */
  close(): Promise<void> {
    if (!this.closing) {
      this.closed = true;
      this.limit.shut();
      this.closing = this.ownsDispatcher ? this.dispatcher.close() : Promise.resolve();
    }
    return this.closing;
  }

  /**
   * One request under the deadline. The slot is taken before the request is handed to undici and
   * given back only when undici is done with it, so no more than `maxInFlight` ever reach sockets.
   */
  private exchange(method: 'GET' | 'POST', path: string, headers: Record<string, string>, body: Buffer | null): Promise<Exchange> {
    if (this.closed) return Promise.resolve({ kind: 'not_sent', reason: 'the connector is closing' });
    const timeoutMs = this.options.timeoutMs;
    return new Promise<Exchange>((resolve) => {
      let settled = false;
      let holdsSlot = false;
      let released = false;
      let written = false;
      let abortRequest: ((err?: Error) => void) | null = null;
      let status = 0;
      let contentType: string | null = null;
      const chunks: Buffer[] = [];
      let received = 0;

      const finish = (result: Exchange) => {
        if (settled) return;
        settled = true;
        clearTimeout(waitLimit);
        clearTimeout(deadline);
        resolve(result);
      };
      const release = () => {
        if (!holdsSlot || released) return;
        released = true;
        this.limit.leave();
      };

      // Waiting for a slot ends at half the timeout, so a request that goes out always has at least
      // the other half on the wire: one granted a slot a moment before its deadline would be sent
      // only to end in doubt, when it could have stayed safely unsent.
      const waitLimitMs = Math.floor(timeoutMs / 2);
      const waitLimit = setTimeout(() => {
        if (place.cancel()) finish({ kind: 'not_sent', reason: `no free connection slot within ${waitLimitMs} ms` });
      }, waitLimitMs);
      const deadline = setTimeout(() => {
        if (!holdsSlot) {
          place.cancel();
          finish({ kind: 'not_sent', reason: `no free connection slot within ${timeoutMs} ms` });
        } else if (!written) {
          // Still connecting: `onConnect`, should it come, aborts before anything is written.
          finish({ kind: 'not_sent', reason: `not connected within ${timeoutMs} ms` });
        } else {
          finish({ kind: 'in_doubt', reason: `no answer within ${timeoutMs} ms` });
          abortRequest?.(Object.assign(new Error('deadline'), { code: 'ETIMEDOUT' }));
        }
      }, timeoutMs);

      const handler: Dispatcher.DispatchHandler = {
        onConnect: (abort) => {
          if (settled) {
            abort(new Error('the request ended before it was sent'));
            return;
          }
          written = true;
          abortRequest = abort;
        },
        onHeaders: (statusCode, rawHeaders) => {
          // 1xx answers are interim: the final one follows.
          if (statusCode >= 200) {
            status = statusCode;
            contentType = headerValue(rawHeaders, 'content-type');
          }
          return true;
        },
        onData: (chunk) => {
          received += chunk.length;
          if (received > MAX_ANSWER_BYTES) {
            finish({ kind: 'in_doubt', reason: `an answer larger than ${MAX_ANSWER_BYTES} bytes` });
            abortRequest?.(new Error('answer too large'));
            return false;
          }
          chunks.push(chunk);
          return true;
        },
        onComplete: () => {
          release();
          finish({ kind: 'response', status, contentType, body: Buffer.concat(chunks) });
        },
        onError: (err) => {
          release();
          finish(written ? { kind: 'in_doubt', reason: describeError(err) } : { kind: 'not_sent', reason: describeError(err) });
        },
        onUpgrade: () => undefined,
      };

      const refuse = () => finish({ kind: 'not_sent', reason: 'the connector is closing' });
      const grant = () => {
        holdsSlot = true;
        clearTimeout(waitLimit);
        if (this.closed || settled) {
          release();
          refuse();
          return;
        }
        try {
          this.dispatcher.dispatch(
            {
              origin: this.origin,
              path: this.basePath + path,
              method,
              headers,
              body,
              reset: true,
              headersTimeout: timeoutMs,
              bodyTimeout: timeoutMs,
            },
            handler,
          );
        } catch (err) {
          release();
          finish({ kind: 'not_sent', reason: describeError(err) });
        }
      };
      const place = this.limit.enter(grant, refuse);
    });
  }
}

/** `Basic base64("<api-key>:")`: the key is the user name, the password empty (the colon matters). */
export const basicAuthorization = (apiKey: string): string => `Basic ${Buffer.from(`${apiKey}:`, 'utf8').toString('base64')}`;

function toWireAnswer(exchange: Exchange): WireAnswer {
  if (exchange.kind !== 'response') return exchange.kind === 'not_sent' ? exchange : { ...exchange, id: null };
  const { status } = exchange;
  if (status === 401) return { kind: 'key_refused' };
  if (status === 404) return { kind: 'not_found' };
  const hal = parseHal(exchange.contentType, exchange.body);
  const id = hal ? nonEmptyString(hal.id) : null;
  // A 5xx leaves the outcome unknown whatever its body says; an id it names is kept (a void can release it).
  if (status >= 500) return { kind: 'in_doubt', reason: `HTTP ${status}`, id };
  const code = hal ? statusCodeOf(hal) : null;
  if (!hal || code === null) return { kind: 'in_doubt', reason: `HTTP ${status} without a readable status code`, id };
  const message = nonEmptyString(asObject(hal.status)?.message);
  return { kind: 'answered', httpStatus: status, code, id, message, body: hal };
}

function accountOf(hal: Record<string, unknown>): ClearhausAccount | null {
  const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);
  // merchant_id is documented as 15 digits; a number (leading zeros lost by a JSON encoder) is padded back.
  const merchantId = typeof hal.merchant_id === 'number' ? String(hal.merchant_id).padStart(15, '0') : text(hal.merchant_id);
  const mcc = typeof hal.mcc === 'number' ? String(hal.mcc).padStart(4, '0') : text(hal.mcc);
  const country = text(hal.country);
  if (!merchantId || !mcc || !country) return null;
  const acquirer = asObject(hal.acquirer);
  const bin = (value: unknown): string | null => (typeof value === 'number' || typeof value === 'string' ? String(value) : null);
  return {
    merchantId,
    descriptor: text(hal.descriptor) ?? '',
    name: text(hal.name) ?? '',
    country,
    currency: text(hal.currency),
    mcc,
    acquirer: { visaBin: bin(acquirer?.visa_bin), mastercardBin: bin(acquirer?.mastercard_bin) },
  };
}
