/**
 * Outbound HTTP for callbacks: one pooled undici Agent, 5 s per attempt, no redirects followed,
 * and — unless private URLs are allowed — a DNS lookup that refuses internal addresses at
 * connect time (the check at request time alone could be bypassed by a changing DNS answer).
 */
import dns from 'node:dns';
import net from 'node:net';
import { Agent, request } from 'undici';
import { isInternalAddress } from './url-policy.js';

export const CALLBACK_TIMEOUT_MS = 5_000;

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

  async post(url: string, headers: Record<string, string>, body: string): Promise<SendResult> {
    // Elapsed time is measured on the process clock: it is a duration, not service time.
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const timeout = this.options.timeoutMs ?? CALLBACK_TIMEOUT_MS;
    // The attempt's whole deadline, cleared when it ends: AbortSignal.timeout's timer would fire
    // after every attempt, building a DOMException and waking the event loop for nothing.
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(Object.assign(new Error(`no answer within the timeout of ${timeout} ms`), { code: 'ETIMEDOUT' })), timeout);
    try {
      const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
      if (!this.options.allowPrivate && net.isIP(host) && isInternalAddress(host)) {
        return { status: null, error: 'refused: internal address', durationMs: elapsed() };
      }
      const res = await request(url, {
        method: 'POST',
        headers,
        body,
        dispatcher: this.agent,
        headersTimeout: timeout,
        bodyTimeout: timeout,
        signal: deadline.signal,
      });
      await res.body.dump().catch(() => undefined);
      return { status: res.statusCode, error: null, durationMs: elapsed() };
    } catch (err) {
      const e = err as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
      const code = e.cause?.code ?? e.code ?? e.name;
      return { status: null, error: `${code ?? 'error'}: ${(e.cause?.message ?? e.message).slice(0, 300)}`, durationMs: elapsed() };
    } finally {
      clearTimeout(timer);
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
