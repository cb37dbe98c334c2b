import { AppError, notFound } from '../../shared/errors.js';
import { newId, newSecret } from '../../shared/ids.js';
import type { Clock } from '../../clock.js';
import { ACCESS_TOKEN_TTL_MS, type Account, type Capabilities, nextAccountStatus, type Principal } from './account.js';
import type { AccountsRepository } from './accounts.repository.js';
import { PrincipalCache } from './principal-cache.js';

export interface CreateAccountInput {
  name: string;
  email: string;
  currencyCode: string;
  timezone: string;
  domain: string;
  language?: string | undefined;
}

export interface AccountsDeps {
  accounts: AccountsRepository;
  transaction<T>(fn: (repos: { accounts: AccountsRepository }) => Promise<T>): Promise<T>;
  clock: Clock;
  hashSecret(secret: string): string;
  /** Whether a secret's hash (hashSecret) is the operator key's; compared in constant time by the caller-supplied matcher. */
  isOperatorKeyHash(secretHash: string): boolean;
  /** Real time, for how long an authenticated credential is remembered (tests pass a fake one). */
  wallNow?: () => number;
}

export class AccountsService {
  /** Recently authenticated credentials (principal-cache.ts); cleared by every change that could turn one away. */
  private readonly principals: PrincipalCache;

  constructor(private readonly deps: AccountsDeps) {
    this.principals = new PrincipalCache(deps.wallNow);
  }

  async create(input: CreateAccountInput): Promise<Account> {
    return this.deps.accounts.insert({
      id: newId(),
      name: input.name,
      email: input.email,
      currencyCode: input.currencyCode,
      timezone: input.timezone,
      language: input.language ?? null,
      domain: input.domain,
      createdAt: this.deps.clock.nowIso(),
    });
  }

  async get(id: string): Promise<Account> {
    const account = await this.deps.accounts.findById(id);
    if (!account) throw notFound('account');
    return account;
  }

  list(offset: number, limit: number): Promise<{ items: Account[]; total: number }> {
    return this.deps.accounts.list(offset, limit);
  }

  async activate(id: string): Promise<Account> {
    const account = await this.get(id);
    const next = nextAccountStatus(account.status, 'activate');
    if (!next) throw new AppError('CONFLICT', `An account in status ${account.status} cannot be activated.`);
    await this.deps.accounts.setStatus(id, next, this.deps.clock.nowIso());
    return this.get(id);
  }

  /** Closes the account and revokes every credential in the same transaction: they stop working at once. */
  async close(id: string): Promise<void> {
    const account = await this.get(id);
    const next = nextAccountStatus(account.status, 'close');
    if (!next) throw new AppError('CONFLICT', `An account in status ${account.status} cannot be deleted.`);
    const at = this.deps.clock.nowIso();
    await this.deps.transaction(async ({ accounts }) => {
      await accounts.setStatus(id, next, at);
      await accounts.revokeCredentials(id, at);
    });
    this.principals.clear();
  }

  async setCapabilities(id: string, capabilities: Partial<Capabilities>): Promise<Account> {
    const account = await this.get(id);
    if (account.status === 'CLOSED') throw new AppError('CONFLICT', 'A deleted account cannot be changed.');
    await this.deps.accounts.setCapabilities(id, capabilities, this.deps.clock.nowIso());
    this.principals.clear();
    return this.get(id);
  }

  async issueAccessToken(accountId: string, environment: string): Promise<{ accessToken: string; expiresAt: string }> {
    const account = await this.get(accountId);
    if (account.status === 'CLOSED') throw new AppError('CONFLICT', 'A deleted account cannot get access tokens.');
    const accessToken = newSecret('pat_');
    const now = this.deps.clock.now();
    const expiresAt = new Date(now + ACCESS_TOKEN_TTL_MS).toISOString();
    await this.deps.accounts.insertCredential({
      id: newId(),
      accountId,
      kind: 'access_token',
      name: null,
      secretHash: this.deps.hashSecret(accessToken),
      environment,
      expiresAt,
      createdAt: new Date(now).toISOString(),
    });
    return { accessToken, expiresAt };
  }

  /** A new API key; the key is returned once and only its hash is kept. */
  async createApiKey(accountId: string, name: string): Promise<{ name: string; key: string }> {
    const key = newSecret('sk_');
    await this.deps.accounts.insertCredential({
      id: newId(),
      accountId,
      kind: 'api_key',
      name,
      secretHash: this.deps.hashSecret(key),
      environment: 'test',
      expiresAt: null,
      createdAt: this.deps.clock.nowIso(),
    });
    return { name, key };
  }

  /** Bearer secret → principal, or null when it is unknown, revoked, expired or of a deleted account. */
  async authenticate(secret: string): Promise<Principal | null> {
    // One hash for both checks; the time as text only for a lookup (the cache compares numbers).
    const hash = this.deps.hashSecret(secret);
    if (this.deps.isOperatorKeyHash(hash)) return { tier: 'operator' };
    let owner = this.principals.get(hash, this.deps.clock.now());
    if (!owner) {
      const mark = this.principals.mark();
      owner = await this.deps.accounts.findCredentialOwner(hash, this.deps.clock.nowIso());
      if (!owner) return null;
      this.principals.set(hash, owner, mark);
    }
    return { tier: 'merchant', accountId: owner.accountId, capabilities: owner.capabilities, credentialId: owner.credentialId };
  }
}
