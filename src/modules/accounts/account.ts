/** Merchant account (partner API) and its state machine. */
export type AccountStatus = 'PENDING' | 'ACTIVE' | 'CLOSED';
export type AccountAction = 'activate' | 'close';

export interface Capabilities {
  moto: boolean;
  syncPayout: boolean;
}

export interface Account {
  id: string;
  name: string;
  email: string;
  currencyCode: string;
  timezone: string;
  language: string | null;
  domain: string;
  addressLineOne: string | null;
  addressLineTwo: string | null;
  city: string | null;
  postalCode: string | null;
  countryCode: string | null;
  phone: string | null;
  invoiceEmail: string | null;
  invoiceAttention: string | null;
  vat: string | null;
  status: AccountStatus;
  capabilities: Capabilities;
  createdAt: string;
  updatedAt: string;
}

/** state × action → next state; a missing entry is a refusal. */
export const ACCOUNT_TRANSITIONS: Record<AccountStatus, Partial<Record<AccountAction, AccountStatus>>> = {
  PENDING: { activate: 'ACTIVE', close: 'CLOSED' },
  ACTIVE: { activate: 'ACTIVE', close: 'CLOSED' },
  CLOSED: {},
};

export function nextAccountStatus(current: AccountStatus, action: AccountAction): AccountStatus | null {
  return ACCOUNT_TRANSITIONS[current][action] ?? null;
}

export type CredentialKind = 'access_token' | 'api_key';
export const ACCESS_TOKEN_TTL_MS = 8 * 3_600_000;

/** Who is calling: the operator (partner tier and sandbox) or a merchant account. */
export type Principal = { tier: 'operator' } | { tier: 'merchant'; accountId: string; capabilities: Capabilities; credentialId: string };
