import type { Clock } from '../../clock.js';
import { fieldError, notFound } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import type { PointOfSale } from '../points-of-sale/point-of-sale.js';
import type { PointsOfSaleService } from '../points-of-sale/points-of-sale.service.js';
import type { Device, Terminal } from './terminal.js';
import type { TerminalFilter, TerminalsRepository } from './terminals.repository.js';

export interface TerminalView {
  terminal: Terminal;
  pointOfSale: PointOfSale;
  device: Device | null;
}

export class TerminalsService {
  constructor(
    private readonly deps: {
      terminals: TerminalsRepository;
      transaction<T>(fn: (repos: { terminals: TerminalsRepository }) => Promise<T>): Promise<T>;
      pointsOfSale: PointsOfSaleService;
      clock: Clock;
    },
  ) {}

  async create(accountId: string, pointOfSaleId: string, input: { name?: string | undefined; fallback?: boolean | undefined }): Promise<TerminalView> {
    const pointOfSale = await this.deps.pointsOfSale.get(accountId, pointOfSaleId);
    if (pointOfSale.type !== 'PHYSICAL') throw fieldError('pointOfSaleId', 'in:PHYSICAL', 'terminals can only be added to a PHYSICAL point of sale');
    const now = this.deps.clock.nowIso();
    const terminal = await this.deps.transaction(async ({ terminals }) => {
      const isFirst = (await terminals.countForPointOfSale(pointOfSaleId)) === 0;
      const created: Terminal = {
        id: newId(),
        accountId,
        pointOfSaleId,
        deviceId: newId(),
        externalId: null,
        name: input.name ?? null,
        fallback: input.fallback ?? isFirst,
        createdAt: now,
      };
      await terminals.insert(created);
      return created;
    });
    return this.view(terminal, pointOfSale);
  }

  async get(accountId: string, id: string): Promise<TerminalView> {
    const terminal = await this.deps.terminals.findById(accountId, id);
    if (!terminal) throw notFound('terminal');
    return this.view(terminal, await this.deps.pointsOfSale.get(accountId, terminal.pointOfSaleId));
  }

  /** GET /terminals: newest first, filtered by point of sale and/or device (INTERFACE §2, §11.6). */
  async list(accountId: string, filter: TerminalFilter, offset: number, limit: number): Promise<{ items: TerminalView[]; total: number }> {
    const page = await this.deps.terminals.list(accountId, filter, offset, limit);
    const cache = new Map<string, PointOfSale>();
    const items: TerminalView[] = [];
    for (const terminal of page.items) {
      let pointOfSale = cache.get(terminal.pointOfSaleId);
      if (!pointOfSale) {
        pointOfSale = await this.deps.pointsOfSale.get(accountId, terminal.pointOfSaleId);
        cache.set(terminal.pointOfSaleId, pointOfSale);
      }
      items.push(this.view(terminal, pointOfSale));
    }
    return { items, total: page.total };
  }

  private view(terminal: Terminal, pointOfSale: PointOfSale): TerminalView {
    const device = terminal.deviceId
      ? { id: terminal.deviceId, description: 'Virtual card terminal (sandbox simulator)', createdAt: terminal.createdAt }
      : null;
    return { terminal, pointOfSale, device };
  }
}
