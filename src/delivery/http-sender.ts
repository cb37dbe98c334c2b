/**
 * Outbound HTTP for callbacks: one pooled undici Agent, 5 s per attempt, no redirects followed,
 * and — unless private URLs are allowed — a DNS lookup that refuses internal addresses at
 * connect time (the check at request time alone could be bypassed by a changing DNS answer).
 */
import dns from 'node:dns';
import net from 'node:net';
import { Agent, type Dispatcher } from 'undici';
import { isInternalAddress } from './url-policy.js';

export const CALLBACK_TIMEOUT_MS = 5_000;
/** The most of an answer's body read (and dropped) on a kept-alive connection, as undici's dump(). */
const MAX_DRAINED_BODY = 128 * 1024;

export interface SendResult {
  status: number | null;
  error: string | null;
  durationMs: number;
}

export interface HttpSender {
  post(url: string, headers: Record<string, string>, body: string): Promise<SendResult>;
  close(): Promise<void>;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address?: string | dns.LookupAddress[], family?: number) => void;

function guardedLookup(hostname: string, options: dns.LookupOptions, callback: LookupCallback): void {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err);
    const list = addresses as dns.LookupAddress[];
    if (list.length === 0 || list.some((a) => isInternalAddress(a.address))) {
      const refused: NodeJS.ErrnoException = new Error(`${hostname} resolves to an internal address`);
      refused.code = 'EINTERNALADDRESS';
      return callback(refused);
    }
    if (options.all) return callback(null, list);
    return callback(null, list[0]!.address, list[0]!.family);
  });
}

export class UndiciSender implements HttpSender {
  private readonly agent: Agent;

  constructor(private readonly options: { allowPrivate: boolean; now: () => number; timeoutMs?: number }) {
    this.agent = new Agent({
      connections: 32,
      keepAliveTimeout: 10_000,
      connect: {
        timeout: options.timeoutMs ?? CALLBACK_TIMEOUT_MS,
        ...(options.allowPrivate ? {} : { lookup: guardedLookup as never }),
      },
    });
  }

  /**
   * One attempt through the agent's dispatch with a handler of its own: `request()` would wrap the
   * answer in a body stream, an abort signal and their promises, only for the status to be read
   * and the body dropped (issue 10: ~30 µs more per callback, warm, in a same-process A/B).
   */
  async post(url: string, headers: Record<string, string>, body: string): Promise<SendResult> {
    // Elapsed time is measured on the process clock: it is a duration, not service time.
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let target: URL;
    try {
      target = new URL(url);
    } catch (err) {
      return { status: null, error: `ERR_INVALID_URL: ${(err as Error).message.slice(0, 300)}`, durationMs: elapsed() };
    }
    const host = target.hostname.replace(/^\[|\]$/g, '');
    if (!this.options.allowPrivate && net.isIP(host) && isInternalAddress(host)) {
      return { status: null, error: 'refused: internal address', durationMs: elapsed() };
    }
    const timeout = this.options.timeoutMs ?? CALLBACK_TIMEOUT_MS;
    return new Promise<SendResult>((resolve) => {
      let status: number | null = null;
      let received = 0;
      let abort: ((reason: Error) => void) | null = null;
      let ended = false;
      const end = (error: string | null) => {
        if (ended) return;
        ended = true;
        clearTimeout(timer);
        resolve({ status, error, durationMs: elapsed() });
      };
      const fail = (err: Error) => {
        // An answer that came before the failure (the deadline while its body still trickles, a
        // body past the limit) is the attempt's result: the receiver answered.
        if (status !== null) return end(null);
        const e = err as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
        const code = e.cause?.code ?? e.code ?? e.name;
        end(`${code ?? 'error'}: ${(e.cause?.message ?? e.message).slice(0, 300)}`);
      };
      // The attempt's whole deadline: the headers' and the body's timeouts are idle times, which a
      // receiver sending a byte now and then never reaches.
      const timer = setTimeout(() => {
        const reason = Object.assign(new Error(`no answer within the timeout of ${timeout} ms`), { code: 'ETIMEDOUT' });
        if (abort) abort(reason);
        else fail(reason);
      }, timeout);
      this.agent.dispatch(
        { origin: target.origin, path: target.pathname + target.search, method: 'POST', headers, body, headersTimeout: timeout, bodyTimeout: timeout },
        {
          onConnect: (abortRequest: (reason: Error) => void) => {
            abort = abortRequest;
            // The deadline passed while connecting: the attempt has ended, the request must not go out.
            if (ended) abortRequest(new Error('the attempt ended before its request was sent'));
          },
          onHeaders: (statusCode: number) => {
            // 1xx answers are interim: the final status follows.
            if (statusCode >= 200) status = statusCode;
            return true;
          },
          onData: (chunk: Buffer) => {
            // The body is read and dropped, up to a limit (as undici's dump()); past it the connection is closed.
            received += chunk.length;
            if (received > MAX_DRAINED_BODY && abort) abort(new Error('answer body past the drained limit'));
            return true;
          },
          onComplete: () => end(null),
          onError: fail,
          onUpgrade: () => undefined,
        } satisfies Dispatcher.DispatchHandler,
      );
    });
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
