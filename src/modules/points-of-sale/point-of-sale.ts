/** Point of sale: where payments are taken (ONLINE web shop or PHYSICAL store with terminals). */
export type PointOfSaleType = 'ONLINE' | 'PHYSICAL';

/** Defaults a CIT session takes for omitted fields. */
export interface HostedConfiguration {
  instantCapture: 'OFF' | 'VOID' | 'NO_VOID';
  scaMode: 'SKIP' | 'NORMAL' | 'FORCE';
  timeout: number;
  notificationUrl: string | null;
  successUrl: string | null;
  failureUrl: string | null;
  retryUrl: string | null;
  maxAttempts: number;
  processor: string[];
  exemptions: Array<'TRA' | 'LVT'>;
  reportFailure: boolean;
  reportExpired: boolean;
}

export const DEFAULT_HOSTED_CONFIGURATION: HostedConfiguration = {
  instantCapture: 'OFF',
  scaMode: 'SKIP',
  timeout: 30,
  notificationUrl: null,
  successUrl: null,
  failureUrl: null,
  retryUrl: null,
  maxAttempts: 3,
  processor: [],
  exemptions: [],
  reportFailure: false,
  reportExpired: false,
};

export interface PointOfSale {
  id: string;
  accountId: string;
  name: string;
  type: PointOfSaleType;
  domain: string;
  descriptor: string | null;
  hostedConfiguration: HostedConfiguration;
  createdAt: string;
  updatedAt: string;
}

/** The point of sale plus its callback Authorization value, opened from the vault. */
export interface PointOfSaleWithSecret extends PointOfSale {
  webhookAuthentication: string;
}

/**
 * What its owner sees of a single point of sale (create, GET, rotation; never lists): the callback
 * Authorization value and the secret that signs its callbacks (INTERFACE §11.10).
 */
export interface PointOfSaleDetail extends PointOfSaleWithSecret {
  signingSecret: string;
}

/**
 * Is `url` on the approved domain: https or http, and the host equal to the domain or a
 * sub-domain of it (INTERFACE §2).
 */
export function isOnApprovedDomain(url: string, domain: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return false;
  const host = parsed.hostname.toLowerCase().replace(/\.$/, '');
  const approved = domain.toLowerCase().replace(/\.$/, '');
  return host === approved || host.endsWith(`.${approved}`);
}

/**
 * The text of a refusal of a URL off the approved domain(s) (INTERFACE §2, §8): which domains are
 * approved for the merchant and how another one is approved, so that the 422 says what to do.
 */
export function approvedDomainRule(domains: string | readonly string[]): string {
  const list = typeof domains === 'string' ? [domains] : [...domains];
  const howToApprove = 'a domain is approved by the point of sale created with it (POST /management/point-of-sales)';
  if (list.length === 0) return `must be an http(s) URL on an approved domain, and this merchant has none yet: ${howToApprove}`;
  if (typeof domains === 'string') {
    return `must be an http(s) URL on this point of sale's approved domain ${list[0]} or a sub-domain of it; ${howToApprove}`;
  }
  return `must be an http(s) URL on an approved domain of this merchant (${list.join(', ')}) or a sub-domain of one; ${howToApprove}`;
}
