/**
 * Where callbacks may go (INTERFACE §8): on the point of sale's approved domain, and — outside
 * the sandbox, unless PAYMENTS_ALLOW_PRIVATE_URLS=1 — never to a loopback, private, link-local or
 * otherwise internal address (checked when the URL is accepted, and again on every connection,
 * so that a DNS answer changed in between cannot reach the inside).
 */
import dns from 'node:dns';
import net from 'node:net';
import { fieldError } from '../shared/errors.js';
import { approvedDomainRule, isOnApprovedDomain } from '../modules/points-of-sale/point-of-sale.js';

/** Is this IP (v4 or v6) one that a callback must not reach? */
export function isInternalAddress(ip: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return isInternalAddress(mapped[1]!);
  if (net.isIPv4(ip)) {
    const [a, b] = ip.split('.').map(Number) as [number, number];
    return (
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 100 && b >= 64 && b <= 127) ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      (a === 198 && (b === 18 || b === 19)) ||
      a >= 224
    );
  }
  if (net.isIPv6(ip)) {
    const lower = ip.toLowerCase();
    return lower === '::' || lower === '::1' || /^f[cd]/.test(lower) || /^fe[89ab]/.test(lower) || /^ff/.test(lower);
  }
  return true;
}

export interface UrlPolicyOptions {
  /** Private addresses allowed (sandbox or PAYMENTS_ALLOW_PRIVATE_URLS=1). */
  allowPrivate: boolean;
  lookup?: (host: string) => Promise<string[]>;
}

const defaultLookup = async (host: string): Promise<string[]> => (await dns.promises.lookup(host, { all: true, verbatim: true })).map((a) => a.address);

export class CallbackUrlPolicy {
  private readonly lookup: (host: string) => Promise<string[]>;

  constructor(private readonly options: UrlPolicyOptions) {
    this.lookup = options.lookup ?? defaultLookup;
  }

  get allowPrivate(): boolean {
    return this.options.allowPrivate;
  }

  /** 422 on `field` unless `url` is an http(s) URL on `domain` that resolves to a public address. */
  async check(field: string, url: string, domain: string): Promise<void> {
    if (!isOnApprovedDomain(url, domain)) throw fieldError(field, 'url', approvedDomainRule(domain));
    if (this.options.allowPrivate) return;
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    let addresses: string[];
    try {
      addresses = net.isIP(host) ? [host] : await this.lookup(host);
    } catch {
      throw fieldError(field, 'url', 'the host does not resolve');
    }
    if (addresses.length === 0 || addresses.some(isInternalAddress)) {
      throw fieldError(field, 'url', 'must not point to a loopback, private or link-local address');
    }
  }
}
