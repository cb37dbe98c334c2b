/**
 * A fake 3dsecure.io 3DS Server with a fake issuer ACS, for the tests, written from the published
 * facts (shared/acquirers/3dsecure-io.md §1, §2, §5 items 1–29) and from nothing of our connector.
 * It is as strict as the real service and the schemes, so that it catches a client's mistakes.
 * One node:http server on 127.0.0.1 serves both:
 *
 *   3DS Server  POST /preauth, /auth, /postauth (other methods 405, other paths 404)
 *     every request  `APIKey: <one of options.apiKeys>`, else 401 text/plain `Invalid API Key` (§2.1);
 *                    `Content-Type: application/json` (charset utf-8 if given) and a JSON object,
 *                    else Erro 101
 *     errors         an EMV Erro (messageType, messageVersion, errorCode, errorComponent,
 *                    errorDescription, errorDetail = the element at fault, threeDSServerTransID when
 *                    known) with HTTP `erroStatus` (default 400; the real codes are undocumented)
 *     /preauth       acctNumber ^[0-9]{13,19}$, ds enum; the sandbox's last-4 cases (cases.ts, §2.8);
 *                    not enrolled → Erro 305 `Unknown BIN` without threeDSServerTransID; else the CRD
 *                    with a fresh UUIDv4 threeDSServerTransID bound to the PAN, live 80 s
 *     /auth          the AReq rules of api.ts and areq.ts (101/102/201/203/301/305); the case's ARes
 *                    (Y/A with a 28-char AV and ECI 05/06, or 02/01 for a PAN starting 5 or 2; N/R/U
 *                    with transStatusReason; I from 2.2.0; C with acsURL on this server), or after
 *                    `dsTimeoutDelayMs` Erro 405 `Unable to contact Directory Server`
 *     /postauth      the RReq for 300 s after the challenge ended; Erro 305 `No RReq has been
 *                    received` before; Erro 203 `Unknown threeDSServerTransID` after, or when unknown
 *   ACS         POST /acs/3dsmethod, /acs/challenge, /acs/challenge/manual (acs.ts)
 *
 * The URLs the requestor gives (threeDSMethodNotificationURL, notificationURL, threeDSRequestorURL)
 * must be https, or plain http on a loopback host (127.0.0.1, localhost, [::1]): the tests run on
 * plain HTTP loopback.
 *
 * What the fake can observe of the 3DS Method is that its page was served for a transaction (and
 * whether that page posts back), not the browser's post to the notification URL. So /auth's
 * threeDSCompInd must be U when no method URL was offered; Y only when the method page was served
 * for the transaction and the card's method does not time out; N when a method URL was offered
 * (the only right answer when it times out).
 *
 * Time (ID lifetime, CReq window, RReq lifetime, purchaseDate) runs on `options.now`; the DS
 * timeout delay and scripted delays on real timers. The PAN stays in memory.
 *
 *   const fake = await startThreeDSFake({ apiKeys: [apiKey], now: () => clock });
 *   fake.script({ path: '/auth', action: 'hang' });     // the next /auth is taken, never answered
 *   ...                                                 // the connector's /auth times out
 *   assert.equal(fake.transaction(id)!.state, 'frictionless');
 *   await fake.close();
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ACS_PATHS, type AcsAnswer, type AcsContext, challengePage, manualDecision, methodPage } from './threeds-fake/acs.js';
import { type ApiAnswer, type ApiContext, auth, postauth, preauth } from './threeds-fake/api.js';
import type { ChallengeMode } from './threeds-fake/cases.js';
import { type ThreeDSTransaction, TransactionStore } from './threeds-fake/state.js';
import {
  checkJsonContentType,
  erroMessage,
  jsonReply,
  type Message,
  parseBrowserForm,
  parseJsonObject,
  Refusal,
  type Reply,
  textReply,
  UUID,
} from './threeds-fake/wire.js';

export { ACS_PATHS } from './threeds-fake/acs.js';
export { isoExponent } from './threeds-fake/areq.js';
export {
  caseOf,
  type CaseOutcome,
  type ChallengeMode,
  DS_VERSIONS,
  type MethodMode,
  NOT_ENROLLED_PAN,
  SANDBOX_PANS,
  sandboxPan,
  type SandboxPanSpec,
  type ThreeDSCase,
} from './threeds-fake/cases.js';
export { CHALLENGE_SCREEN_MS, CREQ_WINDOW_MS, PREAUTH_TTL_MS, RREQ_TTL_MS } from './threeds-fake/state.js';
export type { ChallengeRecord, ThreeDSTransaction, TransactionState } from './threeds-fake/state.js';
export { encodeBase64urlJson, type Message, MESSAGE_VERSIONS, type MessageVersion, type PageForm, readPageForm } from './threeds-fake/wire.js';

export type ApiPath = '/preauth' | '/auth' | '/postauth';

export interface ThreeDSFakeOptions {
  /** The accepted `APIKey` values (UUIDs). Default: one random UUID (see `apiKeys`). */
  apiKeys?: string[];
  /** HTTP status of Erro answers of the API (default 400). */
  erroStatus?: number;
  /** The 3DS Server's and ACS's clock (ms): the 80 s, 30 s, 10 min and 300 s timers and purchaseDate. Default Date.now. */
  now?: () => number;
  /** How long /auth takes before its DS-timeout Erro 405 (real ms; default 0). */
  dsTimeoutDelayMs?: number;
  /** How far purchaseDate may be from the clock (default 5 minutes). */
  purchaseDateToleranceMs?: number;
  /** Pad the base64url the ACS posts back (threeDSMethodData, cres) to test tolerance (default false). */
  padNotifications?: boolean;
  /** The key of the method notification's JSON (default threeDSServerTransID; §1.4 sample: threeDSMethodData). */
  methodNotificationKey?: 'threeDSServerTransID' | 'threeDSMethodData';
}

/** One API request as it arrived, and what became of it. */
export interface RecordedRequest {
  seq: number;
  method: string;
  /** Without the query string. */
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The parsed JSON object, once the request got that far. */
  json?: Message;
  /** The APIKey, when it was one of the fake's. */
  apiKey?: string;
  scripted?: ScriptAction;
  /** Whether the operation ran against the fake's state. */
  processed: boolean;
  /** What went out (or would have: hang, and a scripted http-500 that applied). */
  reply?: Reply;
  answered: boolean;
}

/** One request to the fake ACS's pages. */
export interface RecordedAcsRequest {
  seq: number;
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  form: Record<string, string>;
  threeDSServerTransID?: string;
  reply: Reply;
}

export type ScriptAction = 'hang' | 'http-500' | { slow: number };

export interface ScriptSpec {
  path: ApiPath;
  action: ScriptAction;
  /** Further narrows the match on the parsed JSON body. */
  when?: (json: Message, request: RecordedRequest) => boolean;
  /** Whether the request is carried out anyway: hang and slow default true, http-500 false. */
  applied?: boolean;
  /** How many matching requests it takes (default 1). */
  times?: number;
  /** http-500: the 5xx status (default 500). */
  status?: number;
}

export interface ScriptHandle {
  readonly hits: number;
  readonly done: boolean;
  cancel(): void;
}

export interface ThreeDSFake {
  /** `http://127.0.0.1:<port>`: the 3DS Server API and the ACS pages. */
  readonly url: string;
  readonly port: number;
  readonly apiKeys: readonly string[];
  /** The threeDSMethodURL the CRD offers: `${url}/acs/3dsmethod`. */
  readonly methodURL: string;
  /** The acsURL of an ARes C: `${url}/acs/challenge`. */
  readonly acsURL: string;
  /** HTTP status of Erro answers from now on. */
  erroStatus: number;
  /** /auth's delay before a DS-timeout Erro 405, from now on. */
  dsTimeoutDelayMs: number;
  /** Every request but the POSTs to the ACS pages (API calls, unknown paths, wrong methods), in order. */
  readonly requests: readonly RecordedRequest[];
  requestsTo(path: ApiPath): RecordedRequest[];
  /** Every request to the ACS pages, in order. */
  readonly acsRequests: readonly RecordedAcsRequest[];
  /** A transaction by threeDSServerTransID (the live record). */
  transaction(threeDSServerTransID: string): ThreeDSTransaction | undefined;
  readonly transactions: readonly ThreeDSTransaction[];
  /** The next matching API request fails as scripted. */
  script(spec: ScriptSpec): ScriptHandle;
  clearScripts(): void;
  /** Challenges of this PAN end this way instead of by its 4th digit (undefined: back to the digit). */
  setChallengeMode(pan: string, mode: ChallengeMode | undefined): void;
  /** Forgets requests, transactions, scripts and challenge modes. */
  reset(): void;
  close(): Promise<void>;
}

interface ActiveScript {
  spec: ScriptSpec;
  hits: number;
  cancelled: boolean;
}

const scriptDone = (s: ActiveScript) => s.cancelled || s.hits >= (s.spec.times ?? 1);
const API_PATHS: readonly string[] = ['/preauth', '/auth', '/postauth'];
const ACS_PAGE_PATHS: readonly string[] = Object.values(ACS_PATHS);

export async function startThreeDSFake(options: ThreeDSFakeOptions = {}): Promise<ThreeDSFake> {
  const apiKeys = options.apiKeys ?? [crypto.randomUUID()];
  for (const key of apiKeys) if (!UUID.test(key)) throw new Error(`threeds fake: API keys are UUIDs, not '${key}'`);
  let erroStatus = options.erroStatus ?? 400;
  let dsTimeoutDelayMs = options.dsTimeoutDelayMs ?? 0;
  const store = new TransactionStore(options.now ?? Date.now);
  const challengeModes = new Map<string, ChallengeMode>();
  const requests: RecordedRequest[] = [];
  const acsRequests: RecordedAcsRequest[] = [];
  let scripts: ActiveScript[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let seq = 0;

  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  const apiContext: ApiContext = {
    store,
    methodURL: `${url}${ACS_PATHS.method}`,
    acsURL: `${url}${ACS_PATHS.challenge}`,
    purchaseDateToleranceMs: options.purchaseDateToleranceMs ?? 5 * 60_000,
  };
  const acsContext: AcsContext = {
    store,
    origin: url,
    padNotifications: options.padNotifications ?? false,
    methodNotificationKey: options.methodNotificationKey ?? 'threeDSServerTransID',
    challengeMode: (tx) => challengeModes.get(tx.pan) ?? tx.case.challenge ?? 'pass',
  };

  function later(ms: number, res: http.ServerResponse, fn: () => void): void {
    let clientGone = false;
    res.once('close', () => (clientGone = !res.writableFinished));
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!clientGone) fn();
    }, ms);
    timers.add(timer);
  }

  function write(res: http.ServerResponse, reply: Reply): void {
    res.writeHead(reply.status, { 'content-type': reply.contentType, 'content-length': Buffer.byteLength(reply.body), ...reply.headers }).end(reply.body);
  }

  function send(entry: RecordedRequest, res: http.ServerResponse, reply: Reply): void {
    entry.reply = reply;
    entry.answered = true;
    write(res, reply);
  }

  const toReply = (answer: ApiAnswer): Reply => jsonReply(answer.ok ? 200 : erroStatus, answer.body);

  function operation(path: string, json: Message, raw: string): ApiAnswer {
    if (path === '/preauth') return preauth(apiContext, json);
    if (path === '/auth') return auth(apiContext, json, raw);
    return postauth(apiContext, json);
  }

  function takeScript(entry: RecordedRequest): ScriptSpec | undefined {
    const script = scripts.find((s) => !scriptDone(s) && s.spec.path === entry.path && (s.spec.when === undefined || s.spec.when(entry.json!, entry)));
    if (script) script.hits++;
    return script?.spec;
  }

  /** Authentication and body format: what the 3DS Server refuses before looking at the message. */
  function admit(entry: RecordedRequest, req: http.IncomingMessage): { json: Message } | { refusal: Reply } {
    const header = req.headers.apikey;
    const key = Array.isArray(header) ? undefined : header;
    if (key === undefined || !apiKeys.includes(key)) return { refusal: textReply(401, 'Invalid API Key') };
    entry.apiKey = key;
    try {
      checkJsonContentType(req.headers);
      return { json: parseJsonObject(entry.body) };
    } catch (err) {
      if (!(err instanceof Refusal)) throw err;
      return { refusal: jsonReply(erroStatus, erroMessage(err, {})) };
    }
  }

  function serveApi(req: http.IncomingMessage, res: http.ServerResponse, entry: RecordedRequest): void {
    const admitted = admit(entry, req);
    if ('refusal' in admitted) return send(entry, res, admitted.refusal);
    entry.json = admitted.json;
    let answer: ApiAnswer | undefined;
    const apply = (): ApiAnswer => {
      if (!answer) {
        entry.processed = true;
        answer = operation(entry.path, entry.json!, entry.body);
        entry.reply = toReply(answer);
      }
      return answer;
    };
    const script = takeScript(entry);
    if (!script) {
      const result = apply();
      if (result.dsTimeout && dsTimeoutDelayMs > 0) return later(dsTimeoutDelayMs, res, () => send(entry, res, toReply(result)));
      return send(entry, res, toReply(result));
    }
    entry.scripted = script.action;
    const applied = script.applied ?? script.action !== 'http-500';
    if (script.action === 'hang') {
      if (applied) apply();
    } else if (script.action === 'http-500') {
      if (applied) apply();
      entry.answered = true;
      write(res, { status: script.status ?? 500, contentType: 'text/html', body: '<html><body><h1>Internal Server Error</h1></body></html>' });
    } else {
      const early = applied ? apply() : undefined;
      later(script.action.slow, res, () => send(entry, res, toReply(early ?? apply())));
    }
  }

  function serveAcs(req: http.IncomingMessage, res: http.ServerResponse, path: string, body: string): void {
    let form: Record<string, string> = {};
    let answer: AcsAnswer;
    try {
      form = parseBrowserForm(req.headers, body);
      answer =
        path === ACS_PATHS.method
          ? methodPage(acsContext, form)
          : path === ACS_PATHS.challenge
            ? challengePage(acsContext, form)
            : manualDecision(acsContext, form);
    } catch (err) {
      if (!(err instanceof Refusal)) throw err;
      answer = { reply: jsonReply(400, erroMessage(err, {})) };
    }
    acsRequests.push({
      seq: ++seq,
      method: req.method ?? 'GET',
      path,
      headers: req.headers,
      body,
      form,
      threeDSServerTransID: answer.threeDSServerTransID,
      reply: answer.reply,
    });
    write(res, answer.reply);
  }

  function serve(req: http.IncomingMessage, res: http.ServerResponse, rawBody: Buffer): void {
    const method = req.method ?? 'GET';
    const path = new URL(req.url ?? '/', 'http://threeds.invalid').pathname;
    const body = rawBody.toString('utf8');
    const known = API_PATHS.includes(path) || ACS_PAGE_PATHS.includes(path);
    if (known && method === 'POST' && ACS_PAGE_PATHS.includes(path)) return serveAcs(req, res, path, body);
    const entry: RecordedRequest = { seq: ++seq, method, path, headers: req.headers, body, processed: false, answered: false };
    requests.push(entry);
    if (!known) return send(entry, res, textReply(404, 'Not Found'));
    if (method !== 'POST') return send(entry, res, textReply(405, 'Method Not Allowed', { allow: 'POST' }));
    serveApi(req, res, entry);
  }

  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('error', () => undefined);
    req.on('end', () => {
      try {
        serve(req, res, Buffer.concat(chunks));
      } catch (err) {
        // A bug of the fake itself: say so loudly rather than look like a 3DS Server outage.
        console.error('threeds fake:', err);
        if (!res.headersSent) res.writeHead(599, { 'content-type': 'text/plain' }).end(`threeds fake crashed: ${String(err)}`);
      }
    });
  });
  server.on('clientError', (_err, socket) => socket.destroy());

  return {
    url,
    port,
    apiKeys: [...apiKeys],
    methodURL: apiContext.methodURL,
    acsURL: apiContext.acsURL,
    get erroStatus() {
      return erroStatus;
    },
    set erroStatus(status: number) {
      erroStatus = status;
    },
    get dsTimeoutDelayMs() {
      return dsTimeoutDelayMs;
    },
    set dsTimeoutDelayMs(ms: number) {
      dsTimeoutDelayMs = ms;
    },
    requests,
    requestsTo: (path) => requests.filter((r) => r.method === 'POST' && r.path === path),
    acsRequests,
    transaction: (id) => store.get(id),
    get transactions() {
      return store.all();
    },
    script(spec) {
      const active: ActiveScript = { spec, hits: 0, cancelled: false };
      scripts.push(active);
      return {
        get hits() {
          return active.hits;
        },
        get done() {
          return scriptDone(active);
        },
        cancel: () => void (active.cancelled = true),
      };
    },
    clearScripts: () => void (scripts = []),
    setChallengeMode: (pan, mode) => void (mode === undefined ? challengeModes.delete(pan) : challengeModes.set(pan, mode)),
    reset() {
      requests.length = 0;
      acsRequests.length = 0;
      store.clear();
      scripts = [];
      challengeModes.clear();
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
