/**
 * A fake Clearhaus Transaction API for the tests, written from Clearhaus's published contract
 * (shared/acquirers/clearhaus.md) and from nothing of our connector. It is as strict as Clearhaus,
 * so that it catches the connector's mistakes:
 *
 *   every request  HTTP Basic with a known merchant API key and an empty password, else a bare 401 (§1.3)
 *   every POST     `Signature: <signing key id> RS256-hex <hex>` verifying over the exact body bytes
 *                  (§4.4), an `application/x-www-form-urlencoded` body with raw or percent-encoded
 *                  bracket keys (§1.4), each key once
 *   answers        HAL JSON, `application/vnd.clearhaus-gateway.hal+json; version=0.10.0; charset=utf-8`
 *                  (§1.5); approvals 201; input errors 400; declines 400 or 201 (`declineStatus`, §3.2)
 *   routes         GET /, GET /account, POST /authorizations, GET /authorizations/:id,
 *                  POST /authorizations/:id/{captures,refunds,voids}, POST /credits; anything else 404
 *   rules          parameters: fake/validation.ts (§2.1, §2.2, §2.3, §2.5, §2.10, §4.2);
 *                  amounts, series, voids and time limits: fake/state.ts (§2.1 series, §2.2–§2.4, §4.1);
 *                  the test host's magic amounts, special PANs and CSC 987 (§4.5)
 *   3-D Secure     (§2.1.1; 3dsecure-io.md §4 and §5 items 30–35) `card[3dsecure][v2]`: at most one of
 *                  [ares], [rreq], [raw][...] (else 40000, naming them); an ares/rreq is a JSON object
 *                  of messageType ARes/RReq, an ARes never C or D; raw fields match §4's regexes, eci and
 *                  av required for Visa (4…) and for Mastercard (5…, 2…) on Y/A/I/U, ds_trans_id for
 *                  Mastercard; anything malformed is 40300 [INFERENCE]; no rreq (nor csc) on a
 *                  subsequent-in-series (40000); transStatus N or R → 40310 in the decline style
 *                  [INFERENCE]; echoed as `3dsecure {version, status}`; the record keeps the ARes/RReq
 *                  string exactly as received. No PAN or amount cross-check (an ARes carries no PAN).
 *                  Merchant rule `requireFullyThreeDSecure` → 40200 `not (fully 3dsecure or subsequent
 *                  recurring)` (only transStatus Y is "fully" [INFERENCE]).
 *
 * Tests script failures on the next matching request (`script`), block cards (`blockCard` → 40420),
 * stop listening (`refuse`), and read what arrived (`requests`) and what Clearhaus holds
 * (`authorizations`, `amounts`) to prove at-most-once.
 *
 *   const fake = await startClearhausFake({ merchants: [{ apiKey }] });
 *   fake.script({ method: 'POST', path: /\/captures$/, action: 'hang' });  // applied, never answered
 *   ...                                     // the connector captures; its request times out
 *   assert.equal(fake.amounts(authId).captured, 500);
 *   assert.equal(fake.requestsTo(`/authorizations/${authId}/captures`).length, 1);
 *   await fake.close();
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type AuthorizationRecord,
  ClearhausLedger,
  type CreditRecord,
  type FakeMerchant,
  type Forced,
  FULLY_3DS_RULE,
  type SeriesRecord,
} from './clearhaus-fake/state.js';
import { validateAuthorization, validateCapture, validateCredit, validateRefund } from './clearhaus-fake/validation.js';
import {
  basicApiKey,
  checkContentType,
  CLEARHAUS_DOCS_KEY,
  failureReply,
  type Form,
  HAL_CONTENT_TYPE,
  parseForm,
  Rejection,
  type Reply,
  type SignatureVerdict,
  signatureRejection,
  verifySignature,
} from './clearhaus-fake/wire.js';

export type { AuthorizationRecord, CreditRecord, FakeMerchant, OperationRecord, SeriesRecord } from './clearhaus-fake/state.js';
export { FULLY_3DS_RULE, TEST_HOST_PANS } from './clearhaus-fake/state.js';
export type { ThreeDSecureInput } from './clearhaus-fake/validation.js';
export { CURRENCY_EXPONENTS } from './clearhaus-fake/validation.js';
export { basicAuthHeader, CLEARHAUS_DOCS_KEY, type Form, HAL_CONTENT_TYPE, signatureHeader, signBody } from './clearhaus-fake/wire.js';

export interface ClearhausFakeMerchantOptions {
  apiKey: string;
  /** 15 digits (default: random, with a leading zero). */
  merchantId?: string;
  descriptor?: string;
  name?: string;
  country?: string;
  mcc?: string;
  currency?: string;
  /** A trusted partner may leave `card[csc]` out of a (signed) request. Default true. */
  trusted?: boolean;
  /**
   * The merchant rule `not (fully 3dsecure or subsequent recurring)` (clearhaus.md §3.1): an
   * authorization without a 3-D Secure result of transStatus Y that is not a subsequent-in-series
   * of a `recurring` series is refused 40200 with that message [INFERENCE: "fully" is Y only, A is
   * an attempt]. Default false.
   */
  requireFullyThreeDSecure?: boolean;
}

export interface ClearhausFakeOptions {
  /** Default: one merchant with a random API key. */
  merchants?: ClearhausFakeMerchantOptions[];
  /** The partner's signing API key id. Default: the docs' example key's (CLEARHAUS_DOCS_KEY.id). */
  signingKeyId?: string;
  /** Its public key (PEM). Default: the docs' example public key. */
  signingPublicKeyPem?: string;
  /** HTTP status of declines (not of input errors, always 400). Default 400. */
  declineStatus?: 400 | 201;
  /** Clearhaus's clock (ms): card expiry and the 180/365/30-day limits. Default Date.now. */
  now?: () => number;
  /** 'test-host' accepts only Luhn-failing PANs, the special test PANs and magic PANs (§4.5). Default 'any'. */
  panPolicy?: 'any' | 'test-host';
}

/** One request as it arrived, and what became of it. */
export interface RecordedRequest {
  seq: number;
  method: string;
  /** Without the query string. */
  path: string;
  headers: http.IncomingHttpHeaders;
  rawBody: Buffer;
  body: string;
  /** The parsed form (POSTs that got that far), bracket keys decoded: `card[pan]`. */
  form: Form;
  merchantApiKey?: string;
  signature: SignatureVerdict;
  /** The scripted action that took this request, if any. */
  scripted?: ScriptAction;
  /** Whether the operation ran against the fake's state (it may still have been refused by a rule). */
  processed: boolean;
  /** The operation's answer once processed: what went out, or would have (hang, reset, a scripted http-500 that applied). */
  reply?: Reply;
  /** Whether an answer was written. */
  answered: boolean;
}

export type ScriptAction = 'hang' | 'reset-after-read' | 'http-500' | 'status-50000' | { slow: number };

export interface ScriptSpec {
  /** Default: any method. */
  method?: string;
  /** A string is a path prefix ('/authorizations' also matches its captures); a RegExp is tested on the path. */
  path: string | RegExp;
  /** Further narrows the match on the parsed form. */
  when?: (form: Form, request: RecordedRequest) => boolean;
  action: ScriptAction;
  /**
   * Whether Clearhaus carried the request out although the client learns nothing reliable.
   * hang, reset-after-read, slow: default true (slow + false: carried out only if the client still
   * waits when the answer goes out). http-500, status-50000: default false (a 50000 authorization
   * exists in status 50000 either way).
   */
  applied?: boolean;
  /** How many matching requests it takes (default 1). */
  times?: number;
  /** http-500: the 5xx status (default 500). status-50000: the HTTP status of the JSON answer (default: the decline status). */
  status?: number;
}

export interface ScriptHandle {
  readonly hits: number;
  readonly done: boolean;
  cancel(): void;
  /** Cancels the script and answers at once every request a `slow` action of it still holds. */
  release(): void;
}

export interface AuthorizationAmounts {
  authorized: number;
  captured: number;
  refunded: number;
  capturable: number;
  refundable: number;
  voided: boolean;
}

export interface ClearhausFake {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly port: number;
  readonly merchants: readonly FakeMerchant[];
  /** HTTP status of declines from now on. */
  declineStatus: 400 | 201;
  /** Every request received, in order. */
  readonly requests: readonly RecordedRequest[];
  /** Requests to exactly `path` (string) or matching it (RegExp), by `method` (default POST). */
  requestsTo(path: string | RegExp, method?: string): RecordedRequest[];
  readonly authorizations: readonly AuthorizationRecord[];
  authorization(id: string): AuthorizationRecord | undefined;
  /** Authorized, captured, refunded (counting only what moved), capturable and refundable amounts. */
  amounts(id: string): AuthorizationAmounts;
  readonly series: readonly SeriesRecord[];
  readonly credits: readonly CreditRecord[];
  script(spec: ScriptSpec): ScriptHandle;
  clearScripts(): void;
  /** Authorizations and credits on `pan` end 40420 (merchant blocked by cardholder) until unblocked. */
  blockCard(pan: string): void;
  unblockCard(pan: string): void;
  /** Authorizations and credits on `pan` end with `code` (undefined: back to normal). */
  setCardOutcome(pan: string, code: number | undefined): void;
  /** Stops listening: new connections are refused (ECONNREFUSED), idle keep-alive ones closed. */
  refuse(): Promise<void>;
  /** Listens again on the same port. */
  resume(): Promise<void>;
  /** Forgets requests, transactions, series, scripts and card outcomes. */
  reset(): void;
  close(): Promise<void>;
}

/** A URL where nothing listens: a request there fails with ECONNREFUSED before anything is written. */
export async function refusedUrl(): Promise<string> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

function resolveMerchant(options: ClearhausFakeMerchantOptions): FakeMerchant {
  return {
    apiKey: options.apiKey,
    merchantId: options.merchantId ?? `0${Array.from({ length: 14 }, () => crypto.randomInt(10)).join('')}`,
    descriptor: options.descriptor ?? 'Fake Shop',
    name: options.name ?? 'Fake Shop ApS',
    country: options.country ?? 'DK',
    currency: options.currency ?? 'EUR',
    mcc: options.mcc ?? '5734',
    trusted: options.trusted ?? true,
    requireFullyThreeDSecure: options.requireFullyThreeDSecure ?? false,
  };
}

/** §2.8: `GET /account`. */
function accountBody(merchant: FakeMerchant): Record<string, unknown> {
  return {
    merchant_id: merchant.merchantId,
    descriptor: merchant.descriptor,
    name: merchant.name,
    country: merchant.country,
    currency: merchant.currency,
    mcc: merchant.mcc,
    acquirer: { visa_bin: 438309, mastercard_bin: 526571 },
    // Free text (§2.8); the wording of the rule is [INFERENCE], after the docs' example.
    transaction_rules: merchant.requireFullyThreeDSecure ? `reject authorization if ${FULLY_3DS_RULE}` : '',
    _links: { self: { href: '/account' } },
  };
}

type Handler = (merchant: FakeMerchant, form: Form, forced?: Forced) => Reply;

interface ActiveScript {
  spec: ScriptSpec;
  hits: number;
  cancelled: boolean;
  /** The answers a `slow` action holds, each sent early by release(). */
  held: Set<() => void>;
}

const scriptDone = (s: ActiveScript) => s.cancelled || s.hits >= (s.spec.times ?? 1);
const defaultApplied = (action: ScriptAction) => action !== 'http-500' && action !== 'status-50000';

export async function startClearhausFake(options: ClearhausFakeOptions = {}): Promise<ClearhausFake> {
  const merchants = new Map((options.merchants ?? [{ apiKey: crypto.randomUUID() }]).map((m) => [m.apiKey, resolveMerchant(m)]));
  const signingKeyId = options.signingKeyId ?? CLEARHAUS_DOCS_KEY.id;
  const publicKey = crypto.createPublicKey(options.signingPublicKeyPem ?? CLEARHAUS_DOCS_KEY.publicKeyPem);
  const now = options.now ?? Date.now;
  let declineStatus: 400 | 201 = options.declineStatus ?? 400;
  const cardOutcomes = new Map<string, number>();
  const ledger = new ClearhausLedger({
    now,
    declineStatus: () => declineStatus,
    cardOutcome: (pan) => cardOutcomes.get(pan),
    panPolicy: options.panPolicy ?? 'any',
  });
  const requests: RecordedRequest[] = [];
  let scripts: ActiveScript[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let seq = 0;

  /** The operation behind a method and path, or undefined (404). Path ids are checked by the ledger. */
  function route(method: string, path: string): Handler | undefined {
    if (method === 'GET' && path === '/') {
      return () => ({ status: 200, body: { _links: { authorizations: { href: '/authorizations' }, account: { href: '/account' } } } });
    }
    if (method === 'GET' && path === '/account') return (merchant) => ({ status: 200, body: accountBody(merchant) });
    if (method === 'POST' && path === '/authorizations') {
      return (merchant, form, forced) => ledger.authorize(merchant, validateAuthorization(form, { trusted: merchant.trusted, nowMs: now() }), forced);
    }
    if (method === 'POST' && path === '/credits') return (merchant, form, forced) => ledger.credit(merchant, validateCredit(form, now()), forced);
    const match = /^\/authorizations\/([^/]+)(?:\/(captures|refunds|voids))?$/.exec(path);
    if (!match) return undefined;
    const [, id, operation] = match as unknown as [string, string, string | undefined];
    if (method === 'GET' && operation === undefined) return (merchant) => ({ status: 200, body: ledger.representation(ledger.find(merchant, id)) });
    if (method !== 'POST') return undefined;
    if (operation === 'captures') return (merchant, form, forced) => ledger.capture(merchant, id, validateCapture(form), forced);
    if (operation === 'refunds') return (merchant, form, forced) => ledger.refund(merchant, id, validateRefund(form), forced);
    if (operation === 'voids') return (merchant, _form, forced) => ledger.void(merchant, id, forced);
    return undefined;
  }

  function send(entry: RecordedRequest, res: http.ServerResponse, reply: Reply): void {
    entry.reply = reply;
    entry.answered = true;
    // 401 and 404 carry no body (§1.3, §3.2): a client must act on the HTTP status alone.
    if (reply.body === undefined || reply.status === 401 || reply.status === 404) {
      res.writeHead(reply.status, reply.status === 401 ? 'Not Authorized' : undefined).end();
      return;
    }
    const body = JSON.stringify(reply.body);
    res.writeHead(reply.status, { 'content-type': HAL_CONTENT_TYPE, 'content-length': Buffer.byteLength(body) }).end(body);
  }

  function takeScript(entry: RecordedRequest): ActiveScript | undefined {
    const matches = ({ method, path, when }: ScriptSpec) =>
      (method === undefined || method.toUpperCase() === entry.method) &&
      (typeof path === 'string' ? entry.path.startsWith(path) : path.test(entry.path)) &&
      (when === undefined || when(entry.form, entry));
    const script = scripts.find((s) => !scriptDone(s) && matches(s.spec));
    if (script) script.hits++;
    return script;
  }

  /** Carries out a scripted failure; `apply` runs the operation (and records its reply) once. */
  function runScript(script: ActiveScript, entry: RecordedRequest, req: http.IncomingMessage, res: http.ServerResponse, apply: (forced?: Forced) => Reply) {
    const spec = script.spec;
    const applied = spec.applied ?? defaultApplied(spec.action);
    entry.scripted = spec.action;
    if (spec.action === 'hang') {
      if (applied) apply();
    } else if (spec.action === 'reset-after-read') {
      if (applied) apply();
      req.socket.resetAndDestroy();
    } else if (spec.action === 'http-500') {
      if (applied) apply();
      entry.answered = true;
      res.writeHead(spec.status ?? 500, { 'content-type': 'text/html' }).end('<html><body><h1>Internal Server Error</h1></body></html>');
    } else if (spec.action === 'status-50000') {
      const reply = apply({ code: 50000, applied });
      send(entry, res, spec.status === undefined ? reply : { ...reply, status: spec.status });
    } else {
      let clientGone = false;
      res.once('close', () => (clientGone = !res.writableFinished));
      const early = applied ? apply() : undefined;
      const answer = () => {
        clearTimeout(timer);
        timers.delete(timer);
        script.held.delete(answer);
        if (!clientGone) send(entry, res, early ?? apply());
      };
      const timer = setTimeout(answer, spec.action.slow);
      timers.add(timer);
      script.held.add(answer);
    }
  }

  /** Authentication, signature and body format: what Clearhaus refuses before any transaction rule. */
  function admit(entry: RecordedRequest, req: http.IncomingMessage): FakeMerchant | Reply {
    const merchant = merchants.get(basicApiKey(req.headers.authorization) ?? '');
    if (!merchant) return { status: 401 };
    entry.merchantApiKey = merchant.apiKey;
    const header = req.headers.signature;
    entry.signature = verifySignature(Array.isArray(header) ? header.join(', ') : header, entry.rawBody, signingKeyId, publicKey);
    try {
      // POSTs must be signed; other requests may be, and then the signature must hold.
      if (entry.signature !== 'valid' && (entry.method === 'POST' || entry.signature !== 'absent')) throw signatureRejection(entry.signature);
      if (entry.method === 'POST') {
        checkContentType(req.headers, entry.rawBody.length);
        entry.form = parseForm(entry.body);
      }
    } catch (err) {
      if (err instanceof Rejection) return failureReply(err.code, err.message, err.http);
      throw err;
    }
    return merchant;
  }

  function serve(req: http.IncomingMessage, res: http.ServerResponse, rawBody: Buffer): void {
    const entry: RecordedRequest = {
      seq: ++seq,
      method: req.method ?? 'GET',
      path: new URL(req.url ?? '/', 'http://clearhaus.invalid').pathname,
      headers: req.headers,
      rawBody,
      body: rawBody.toString('utf8'),
      form: {},
      signature: 'absent',
      processed: false,
      answered: false,
    };
    requests.push(entry);
    const admitted = admit(entry, req);
    if (!('apiKey' in admitted)) return send(entry, res, admitted);
    const handler = route(entry.method, entry.path);
    if (!handler) return send(entry, res, { status: 404 });
    const apply = (forced?: Forced): Reply => {
      entry.processed = true;
      try {
        entry.reply = handler(admitted, entry.form, forced);
      } catch (err) {
        if (!(err instanceof Rejection)) throw err;
        entry.reply = failureReply(err.code, err.message, err.http);
      }
      return entry.reply;
    };
    const script = takeScript(entry);
    if (script) runScript(script, entry, req, res, apply);
    else send(entry, res, apply());
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('error', () => undefined);
    req.on('end', () => {
      try {
        serve(req, res, Buffer.concat(chunks));
      } catch (err) {
        // A bug of the fake itself: say so loudly rather than look like a Clearhaus outage.
        console.error('clearhaus fake:', err);
        if (!res.headersSent) res.writeHead(599, { 'content-type': 'text/plain' }).end(`clearhaus fake crashed: ${String(err)}`);
      }
    });
  });
  server.on('clientError', (_err, socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const authorizationOf = (id: string) => {
    const record = ledger.authorizations.get(id);
    if (!record) throw new Error(`clearhaus fake: no authorization ${id}`);
    return record;
  };

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    merchants: [...merchants.values()],
    get declineStatus() {
      return declineStatus;
    },
    set declineStatus(status: 400 | 201) {
      declineStatus = status;
    },
    requests,
    requestsTo: (path, method = 'POST') =>
      requests.filter((r) => r.method === method.toUpperCase() && (typeof path === 'string' ? r.path === path : path.test(r.path))),
    get authorizations() {
      return [...ledger.authorizations.values()];
    },
    authorization: (id) => ledger.authorizations.get(id),
    amounts(id) {
      const a = authorizationOf(id);
      const capturable = a.statusCode === 20000 && !a.voided ? a.amount - a.capturedAmount : 0;
      return {
        authorized: a.amount,
        captured: a.capturedAmount,
        refunded: a.refundedAmount,
        capturable,
        refundable: a.capturedAmount - a.refundedAmount,
        voided: a.voided,
      };
    },
    get series() {
      return [...ledger.series.values()];
    },
    get credits() {
      return [...ledger.credits.values()];
    },
    script(spec) {
      const active: ActiveScript = { spec, hits: 0, cancelled: false, held: new Set() };
      scripts.push(active);
      return {
        get hits() {
          return active.hits;
        },
        get done() {
          return scriptDone(active);
        },
        cancel: () => void (active.cancelled = true),
        release: () => {
          active.cancelled = true;
          for (const answer of [...active.held]) answer();
        },
      };
    },
    clearScripts: () => void (scripts = []),
    blockCard: (pan) => void cardOutcomes.set(pan, 40420),
    unblockCard: (pan) => void cardOutcomes.delete(pan),
    setCardOutcome: (pan, code) => void (code === undefined ? cardOutcomes.delete(pan) : cardOutcomes.set(pan, code)),
    async refuse() {
      if (!server.listening) return;
      server.close(() => undefined);
      server.closeIdleConnections();
      // Let clients see their idle keep-alive connections end, so that their next request opens a
      // connection (and is refused) instead of meeting a socket closed under it.
      await new Promise((resolve) => setTimeout(resolve, 25));
    },
    async resume() {
      if (server.listening) return;
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    },
    reset() {
      requests.length = 0;
      ledger.clear();
      scripts = [];
      cardOutcomes.clear();
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      const closed = new Promise((resolve) => (server.listening ? server.close(resolve) : resolve(undefined)));
      server.closeAllConnections();
      await closed;
    },
  };
}
