/**
 * 3dsecure.io, the 3DS Server Clearhaus points its merchants to (shared/acquirers/3dsecure-io.md §2):
 * `POST /preauth`, `/auth` and `/postauth`, JSON both ways, the merchant's key in the `APIKey`
 * header. A call fails when the HTTP status is not 200 or the body is an `Erro` message (the non-200
 * statuses are not documented, so the body decides what is said). Every call has a deadline
 * (THREEDS_TIMEOUT_MS); a call that misses it is `unavailable`, like one that never connected: no
 * money moves at a 3DS Server, and the decision table treats both as "no 3-D Secure result".
 *
 * Nothing here logs: the PAN goes to /preauth and /auth, and answers carry authentication values.
 */
import { Pool } from 'undici';
import {
  type MessageResult,
  SUPPORTED_VERSIONS,
  type ThreeDSFailure,
  type ThreeDSMessage,
  type ThreeDSServer,
  type VersioningResult,
} from './three-d-secure.js';

export interface ThreeDSecureIoOptions {
  /** e.g. `https://service.sandbox.3dsecure.io` (THREEDS_URL). */
  baseUrl: string;
  /** The whole of one call (THREEDS_TIMEOUT_MS). */
  timeoutMs: number;
}

/** The most of an answer read: 3DS messages are a few kilobytes. */
const MAX_ANSWER_BYTES = 256 * 1024;

type Json = Record<string, unknown>;
type Exchange = { kind: 'ok'; body: Json; raw: string } | ThreeDSFailure;

const asObject = (value: unknown): Json | null => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : null);
const text = (value: unknown): string | null => (typeof value === 'string' && value.length > 0 ? value : null);

/** `2.1.0` < `2.2.0` < `2.3.1`. */
const versionRank = (version: string): number => version.split('.').reduce((rank, part) => rank * 100 + (Number(part) || 0), 0);

/**
 * The highest supported version within the card range: `acsProtocolVersions[]` and
 * `dsProtocolVersions[]` when given (2024-09 on), else the start–end ranges (3dsecure-io.md §1.3).
 */
export function chooseVersion(crd: Json): { version: string; threeDSMethodURL: string | null } | null {
  const listed = Array.isArray(crd.acsProtocolVersions) ? crd.acsProtocolVersions.map(asObject).filter((v) => v !== null) : null;
  const dsListed = Array.isArray(crd.dsProtocolVersions) ? crd.dsProtocolVersions.filter((v): v is string => typeof v === 'string') : null;
  const inRange = (version: string, start: unknown, end: unknown) =>
    typeof start === 'string' && typeof end === 'string' && versionRank(start) <= versionRank(version) && versionRank(version) <= versionRank(end);
  for (const version of SUPPORTED_VERSIONS) {
    const dsOk = dsListed ? dsListed.includes(version) : inRange(version, crd.dsStartProtocolVersion, crd.dsEndProtocolVersion);
    if (!dsOk) continue;
    if (listed && listed.length > 0) {
      const entry = listed.find((v) => v.version === version);
      // [INFERENCE] 3dsecure-io.md §1.3: the method URL listed for the chosen version.
      if (entry) return { version, threeDSMethodURL: text(entry.threeDSMethodURL) ?? text(crd.threeDSMethodURL) };
    } else if (inRange(version, crd.acsStartProtocolVersion, crd.acsEndProtocolVersion)) {
      return { version, threeDSMethodURL: text(crd.threeDSMethodURL) };
    }
  }
  return null;
}

/** The fields the service reads from an ARes or RReq; null when `body` is not one of `type`. */
export function readMessage(body: Json, type: 'ARes' | 'RReq'): ThreeDSMessage | null {
  if (body.messageType !== type) return null;
  const id = text(body.threeDSServerTransID);
  const version = text(body.messageVersion);
  if (!id || !version) return null;
  return {
    messageType: type,
    messageVersion: version,
    threeDSServerTransID: id,
    transStatus: text(body.transStatus),
    transStatusReason: text(body.transStatusReason),
    eci: text(body.eci),
    acsTransID: text(body.acsTransID),
    dsTransID: text(body.dsTransID),
    acsURL: text(body.acsURL),
    challengeCancel: text(body.challengeCancel),
    hasAuthenticationValue: text(body.authenticationValue) !== null,
  };
}

function erroOf(body: Json): ThreeDSFailure | null {
  if (body.messageType !== 'Erro') return null;
  return {
    kind: 'erro',
    errorCode: String(body.errorCode ?? ''),
    errorComponent: text(body.errorComponent),
    errorDescription: text(body.errorDescription) ?? '',
    errorDetail: text(body.errorDetail),
  };
}

export class ThreeDSecureIo implements ThreeDSServer {
  readonly provider = '3dsecure.io' as const;
  private readonly pool: Pool;
  private readonly origin: string;
  private readonly basePath: string;
  private closing: Promise<void> | null = null;

  constructor(private readonly options: ThreeDSecureIoOptions) {
    const url = new URL(options.baseUrl);
    this.origin = url.origin;
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.pool = new Pool(this.origin, { connect: { timeout: options.timeoutMs }, headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs });
  }

  async versioning(apiKey: string, pan: string): Promise<VersioningResult> {
    const answer = await this.post('/preauth', apiKey, { acctNumber: pan });
    if (answer.kind !== 'ok') return answer.kind === 'erro' && answer.errorCode === '305' ? { kind: 'not_enrolled' } : answer;
    const id = text(answer.body.threeDSServerTransID);
    if (answer.body.messageType !== 'CRD' && answer.body.messageType !== undefined) return unreadable('/preauth');
    if (!id) return unreadable('/preauth');
    const chosen = chooseVersion(answer.body);
    if (!chosen) return { kind: 'no_common_version' };
    return { kind: 'card_range', threeDSServerTransID: id, messageVersion: chosen.version, threeDSMethodURL: chosen.threeDSMethodURL };
  }

  authenticate(apiKey: string, areq: Record<string, unknown>): Promise<MessageResult> {
    return this.message('/auth', apiKey, areq, 'ARes');
  }

  challengeResult(apiKey: string, threeDSServerTransID: string): Promise<MessageResult> {
    return this.message('/postauth', apiKey, { threeDSServerTransID }, 'RReq');
  }

  /** Closes the connections once (the runtime and a test may both close it). */
  close(): Promise<void> {
    this.closing ??= this.pool.close();
    return this.closing;
  }

  private async message(path: string, apiKey: string, body: Json, type: 'ARes' | 'RReq'): Promise<MessageResult> {
    const answer = await this.post(path, apiKey, body);
    if (answer.kind !== 'ok') return answer;
    const message = readMessage(answer.body, type);
    return message ? { kind: 'message', message, raw: answer.raw } : unreadable(path);
  }

  /** One call: the JSON answer of a 200 that is not an Erro (with its exact text, for the acquirer), or the failure. */
  private async post(path: string, apiKey: string, body: Json): Promise<Exchange> {
    let status: number;
    let contentType: string;
    let textBody: string;
    try {
      const response = await this.pool.request({
        origin: this.origin,
        path: this.basePath + path,
        method: 'POST',
        headers: { apikey: apiKey, 'content-type': 'application/json; charset=utf-8', accept: 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      status = response.statusCode;
      contentType = String(response.headers['content-type'] ?? '');
      const bytes = Buffer.from(await response.body.arrayBuffer());
      if (bytes.length > MAX_ANSWER_BYTES) return { kind: 'unavailable', reason: `3dsecure.io ${path}: an answer larger than ${MAX_ANSWER_BYTES} bytes` };
      textBody = bytes.toString('utf8');
    } catch (err) {
      return { kind: 'unavailable', reason: `3dsecure.io ${path}: ${describe(err)}` };
    }
    if (status === 401) return { kind: 'unavailable', reason: `3dsecure.io ${path}: the API key was refused (HTTP 401)` };
    let parsed: Json | null = null;
    if (/json/i.test(contentType) || textBody.trimStart().startsWith('{')) {
      try {
        parsed = asObject(JSON.parse(textBody));
      } catch {
        parsed = null;
      }
    }
    if (parsed) {
      const erro = erroOf(parsed);
      if (erro) return erro;
    }
    if (status !== 200 || !parsed) return { kind: 'unavailable', reason: `3dsecure.io ${path}: HTTP ${status} without a readable message` };
    return { kind: 'ok', body: parsed, raw: textBody };
  }
}

const unreadable = (path: string): ThreeDSFailure => ({ kind: 'unavailable', reason: `3dsecure.io ${path}: an answer that is not the documented message` });

/** A failure as code and phrase only: lower layers' messages are not quoted (they could carry anything). */
function describe(err: unknown): string {
  const e = err as { code?: unknown; name?: unknown; cause?: { code?: unknown } } | null;
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return 'no answer in time';
  const raw = e?.code ?? e?.cause?.code ?? e?.name;
  return typeof raw === 'string' && /^[A-Za-z0-9_]{1,64}$/.test(raw) ? `transport error (${raw})` : 'transport error';
}
