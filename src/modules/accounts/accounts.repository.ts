import type { Account, AccountStatus, Capabilities, CredentialKind } from './account.js';

export interface NewAccount {
  id: string;
  name: string;
  email: string;
  currencyCode: string;
  timezone: string;
  language: string | null;
  domain: string;
  createdAt: string;
}

export interface CredentialOwner {
  credentialId: string;
  accountId: string;
  capabilities: Capabilities;
  /** When the credential stops working (access tokens); null: it does not expire (API keys). */
  expiresAt: string | null;
}

export interface AccountsRepository {
  insert(account: NewAccount): Promise<Account>;
  findById(id: string): Promise<Account | null>;
  list(offset: number, limit: number): Promise<{ items: Account[]; total: number }>;
  setStatus(id: string, status: AccountStatus, at: string): Promise<void>;
  setCapabilities(id: string, capabilities: Partial<Capabilities>, at: string): Promise<void>;
  insertCredential(credential: {
    id: string;
    accountId: string;
    kind: CredentialKind;
    name: string | null;
    secretHash: string;
    environment: string;
    expiresAt: string | null;
    createdAt: string;
  }): Promise<void>;
  /** The live owner of a credential hash: not revoked, not expired at `now`, account not closed. */
  findCredentialOwner(secretHash: string, now: string): Promise<CredentialOwner | null>;
  revokeCredentials(accountId: string, at: string): Promise<void>;
}
