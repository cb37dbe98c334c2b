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

/** The point of sale plus its callback Authorization value, opened from the vault (never returned on the wire). */
export interface PointOfSaleWithSecret extends PointOfSale {
  webhookAuthentication: string;
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
