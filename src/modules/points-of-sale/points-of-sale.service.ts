import type { Clock } from '../../clock.js';
import { BoundedMap } from '../../shared/bounded-map.js';
import { FieldErrorCollector, notFound } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { loadSigningSecrets, newSigningSecret, rotateSigningSecrets, type SigningSecrets, type SigningSecretsPort } from '../../shared/signing.js';
import type { Sealer } from '../../security/secret-box.js';
import {
  approvedDomainRule,
  DEFAULT_HOSTED_CONFIGURATION,
  type HostedConfiguration,
  isOnApprovedDomain,
  type PointOfSale,
  type PointOfSaleDetail,
  type PointOfSaleType,
  type PointOfSaleWithSecret,
} from './point-of-sale.js';
import type { PointsOfSaleRepository, StoredPointOfSale } from './points-of-sale.repository.js';

export interface CreatePointOfSaleInput {
  name: string;
  domain: string;
  webhookAuthentication: string;
  type?: PointOfSaleType | undefined;
  descriptor?: string | undefined;
  hostedConfiguration?: Partial<HostedConfiguration> | undefined;
}

/**
 * How long a process signs callbacks with the secrets it read (service time). A rotation made by
 * this process takes effect at once; one made by another process within this long — meanwhile the
 * replaced secret still signs, so a receiver that kept it verifies throughout.
 */
export const SIGNING_SECRETS_CACHE_MS = 1_000;
const SIGNING_SECRETS_CACHE_ENTRIES = 10_000;

export class PointsOfSaleService {
  /**
   * Secrets that sign callbacks, per point of sale: read once a second at most, not at every
   * callback. The read itself is shared: callbacks finishing together wait for one read, not one each.
   */
  private readonly signing = new BoundedMap<string, { secrets: Promise<SigningSecrets | null>; readAt: number }>(SIGNING_SECRETS_CACHE_ENTRIES);

  constructor(private readonly deps: { pointsOfSale: PointsOfSaleRepository; clock: Clock; sealer: Sealer }) {}

  async create(accountId: string, input: CreatePointOfSaleInput): Promise<PointOfSaleDetail> {
    const domain = input.domain.toLowerCase();
    const hosted: HostedConfiguration = { ...DEFAULT_HOSTED_CONFIGURATION, ...input.hostedConfiguration };
    const errors = new FieldErrorCollector();
    for (const field of ['notificationUrl', 'successUrl', 'failureUrl', 'retryUrl'] as const) {
      const url = hosted[field];
      if (url && !isOnApprovedDomain(url, domain)) errors.add(`hostedConfiguration.${field}`, 'url', approvedDomainRule(domain));
    }
    errors.throwIfAny();
    const now = this.deps.clock.nowIso();
    const pointOfSale: PointOfSale = {
      id: newId(),
      accountId,
      name: input.name,
      type: input.type ?? 'ONLINE',
      domain,
      descriptor: input.descriptor ?? null,
      hostedConfiguration: hosted,
      createdAt: now,
      updatedAt: now,
    };
    const signingSecret = newSigningSecret();
    const { sealer } = this.deps;
    await this.deps.pointsOfSale.insert(pointOfSale, sealer.seal(input.webhookAuthentication), sealer.seal(signingSecret));
    return { ...pointOfSale, webhookAuthentication: input.webhookAuthentication, signingSecret };
  }

  async get(accountId: string, id: string): Promise<PointOfSale> {
    const found = await this.deps.pointsOfSale.findById(accountId, id);
    if (!found) throw notFound('point of sale');
    const {
      webhookAuthenticationSealed: _sealed,
      signingSecretSealed: _s,
      previousSigningSecretSealed: _p,
      previousSigningSecretExpiresAt: _e,
      ...pointOfSale
    } = found;
    return pointOfSale;
  }

  /** The point of sale as its owner sees it alone: with its callback Authorization value and signing secret. */
  async detail(accountId: string, id: string): Promise<PointOfSaleDetail> {
    const loaded = await loadSigningSecrets(this.port(accountId, id), this.deps.sealer);
    if (!loaded) throw notFound('point of sale');
    return { ...this.opened(loaded.stored), signingSecret: loaded.secrets.current };
  }

  /** A new secret for its callbacks; the replaced one keeps signing for 24 hours of service time. */
  async rotateSigningSecret(accountId: string, id: string): Promise<PointOfSaleDetail> {
    const rotated = await rotateSigningSecrets(this.port(accountId, id), this.deps.sealer, () => this.deps.clock.now());
    if (!rotated) throw notFound('point of sale');
    this.signing.delete(`${accountId}:${id}`);
    const withSecret = await this.getWithSecret(accountId, id);
    if (!withSecret) throw notFound('point of sale');
    return { ...withSecret, signingSecret: rotated.current };
  }

  /**
   * The secrets that sign this point of sale's callbacks (for delivery; null: no such point of
   * sale). Read at most once per SIGNING_SECRETS_CACHE_MS per process.
   */
  async signingSecrets(accountId: string, id: string): Promise<SigningSecrets | null> {
    const key = `${accountId}:${id}`;
    const now = this.deps.clock.now();
    const cached = this.signing.get(key);
    if (cached && now - cached.readAt < SIGNING_SECRETS_CACHE_MS && now >= cached.readAt) return cached.secrets;
    const secrets = this.loadSecrets(accountId, id);
    const entry = { secrets, readAt: now };
    this.signing.set(key, entry);
    // A failed or empty read is not kept: the next callback reads again.
    const forget = () => {
      if (this.signing.get(key) === entry) this.signing.delete(key);
    };
    secrets.then((found) => found ?? forget(), forget);
    return secrets;
  }

  /** With the callback Authorization value opened; for delivery only. */
  async getWithSecret(accountId: string, id: string): Promise<PointOfSaleWithSecret | null> {
    const found = await this.deps.pointsOfSale.findById(accountId, id);
    return found && this.opened(found);
  }

  private opened(found: StoredPointOfSale): PointOfSaleWithSecret {
    const { webhookAuthenticationSealed, signingSecretSealed: _s, previousSigningSecretSealed: _p, previousSigningSecretExpiresAt: _e, ...pointOfSale } = found;
    return { ...pointOfSale, webhookAuthentication: this.deps.sealer.open(webhookAuthenticationSealed) };
  }

  list(accountId: string, offset: number, limit: number): Promise<{ items: PointOfSale[]; total: number }> {
    return this.deps.pointsOfSale.list(accountId, offset, limit);
  }

  private async loadSecrets(accountId: string, id: string): Promise<SigningSecrets | null> {
    return (await loadSigningSecrets(this.port(accountId, id), this.deps.sealer))?.secrets ?? null;
  }

  private port(accountId: string, id: string): SigningSecretsPort<StoredPointOfSale> {
    const repo = this.deps.pointsOfSale;
    return {
      read: () => repo.findById(accountId, id),
      fill: (sealed) => repo.fillSigningSecret(accountId, id, sealed),
      replace: (expected, next) => repo.replaceSigningSecrets(accountId, id, expected, next, this.deps.clock.nowIso()),
    };
  }
}
