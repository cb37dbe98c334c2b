import type { Clock } from '../../clock.js';
import { FieldErrorCollector, notFound } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import type { Sealer } from '../../security/secret-box.js';
import {
  DEFAULT_HOSTED_CONFIGURATION,
  type HostedConfiguration,
  isOnApprovedDomain,
  type PointOfSale,
  type PointOfSaleType,
  type PointOfSaleWithSecret,
} from './point-of-sale.js';
import type { PointsOfSaleRepository } from './points-of-sale.repository.js';

export interface CreatePointOfSaleInput {
  name: string;
  domain: string;
  webhookAuthentication: string;
  type?: PointOfSaleType | undefined;
  descriptor?: string | undefined;
  hostedConfiguration?: Partial<HostedConfiguration> | undefined;
}

export class PointsOfSaleService {
  constructor(private readonly deps: { pointsOfSale: PointsOfSaleRepository; clock: Clock; sealer: Sealer }) {}

  async create(accountId: string, input: CreatePointOfSaleInput): Promise<PointOfSale> {
    const domain = input.domain.toLowerCase();
    const hosted: HostedConfiguration = { ...DEFAULT_HOSTED_CONFIGURATION, ...input.hostedConfiguration };
    const errors = new FieldErrorCollector();
    for (const field of ['notificationUrl', 'successUrl', 'failureUrl', 'retryUrl'] as const) {
      const url = hosted[field];
      if (url && !isOnApprovedDomain(url, domain)) errors.add(`hostedConfiguration.${field}`, 'url', `must be on the approved domain ${domain}`);
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
    await this.deps.pointsOfSale.insert(pointOfSale, this.deps.sealer.seal(input.webhookAuthentication));
    return pointOfSale;
  }

  async get(accountId: string, id: string): Promise<PointOfSale> {
    const found = await this.deps.pointsOfSale.findById(accountId, id);
    if (!found) throw notFound('point of sale');
    const { webhookAuthenticationSealed: _sealed, ...pointOfSale } = found;
    return pointOfSale;
  }

  /** With the callback Authorization value opened; for delivery only. */
  async getWithSecret(accountId: string, id: string): Promise<PointOfSaleWithSecret | null> {
    const found = await this.deps.pointsOfSale.findById(accountId, id);
    if (!found) return null;
    const { webhookAuthenticationSealed, ...pointOfSale } = found;
    return { ...pointOfSale, webhookAuthentication: this.deps.sealer.open(webhookAuthenticationSealed) };
  }

  list(accountId: string, offset: number, limit: number): Promise<{ items: PointOfSale[]; total: number }> {
    return this.deps.pointsOfSale.list(accountId, offset, limit);
  }
}
