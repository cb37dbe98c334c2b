/**
 * The settlement engine and the merchant's read side.
 *
 * A run streams, per merchant, the SUCCESS captures, sales, refunds and payouts not yet settled in
 * keyset batches (never the whole set in memory). Each batch is one database transaction that
 * row-locks the merchant's OPEN transfer per currency, inserts the batch's settlement transactions
 * (the unique operation_id is the exactly-once claim: rows another run inserted first are skipped)
 * and adds exactly the inserted rows' sums to the transfer. After the merchant's scan, each OPEN
 * transfer is completed in one transaction together with its `settlement.transfer-ready.v1` event.
 * A crash leaves only whole batches behind in an invisible OPEN transfer, which the next run
 * continues and completes.
 */
import { randomBytes } from 'node:crypto';
import type { Keyset } from '../../shared/pagination.js';
import { notFound } from '../../shared/errors.js';
import type { EventsLog } from '../../shared/events-log.js';
import { newId } from '../../shared/ids.js';
import { DAY_MS, iso } from '../../shared/time.js';
import type { EventOutbox } from '../events/event-outbox.js';
import { settleAmounts, TRANSACTION_FEE_TYPES, transferAdjustments, type FeeSchedule, type TransactionFeeType } from './fees.js';
import {
  moneyNumber,
  TRANSFER_READY_EVENT,
  type SettleableOperation,
  type SettlementTransaction,
  type SettlementTransfer,
  type TransferDelta,
} from './settlement.js';
import { settlementTransferWire } from './settlements.schemas.js';
import type { NewTransfer, ScanPosition, SettlementsRepository } from './settlements.repository.js';

/** Settings key: operations finalized before this instant were all settled by a complete run. */
export const SCAN_FROM_SETTING = 'settlements.scan_from';
/**
 * How far behind a run's start the next run starts scanning. An operation's finalizedAt is read
 * from the clock just before its commit, so a later commit can carry an earlier time; the margin
 * covers that by a wide berth while keeping a daily run from re-reading all history.
 */
export const SCAN_OVERLAP_MS = 2 * DAY_MS;
const ACCOUNT_PAGE = 500;

export interface SettlementsRepos {
  settlements: SettlementsRepository;
  events: EventOutbox;
}

export interface SettlementsDeps {
  /** Bound to the pool: the scans and the merchant's reads. */
  settlements: SettlementsRepository;
  transaction<T>(fn: (repos: SettlementsRepos) => Promise<T>): Promise<T>;
  settings: { get(key: string): Promise<string | null>; set(key: string, value: string): Promise<void> };
  clock: { now(): number };
  schedule: FeeSchedule;
  /** Acquirer name on transfers; default 'sandbox' (the simulator is the only connector). */
  acquirer?: string;
  /** Operations per batch (and per commit); default 1 000. */
  batchSize?: number;
  /** One `settlement.run` line per completed run. */
  events?: EventsLog;
}

export interface RunOptions {
  /** YYYY-MM-DD; default the service clock's date (UTC). */
  postingDate?: string | undefined;
}

export interface RunResult {
  transfers: SettlementTransfer[];
  /** Settlement transactions this run inserted. */
  settled: number;
}

/** The acquirer merchant id of an account (the sandbox acquirer derives it from the account id). */
export const agreementIdOf = (acquirer: string, accountId: string): string => `${acquirer}-${accountId.replaceAll('-', '').slice(0, 12)}`;

export class SettlementsService {
  private readonly acquirer: string;
  private readonly batchSize: number;
  readonly feeDescriptions: Record<TransactionFeeType, string>;

  constructor(private readonly deps: SettlementsDeps) {
    this.acquirer = deps.acquirer ?? 'sandbox';
    this.batchSize = deps.batchSize ?? 1000;
    this.feeDescriptions = Object.fromEntries(TRANSACTION_FEE_TYPES.map((type) => [type, deps.schedule.transaction[type]?.description ?? type])) as Record<
      TransactionFeeType,
      string
    >;
  }

  /** Settles everything not yet settled, for every merchant; returns the transfers it completed. */
  async run(options: RunOptions = {}): Promise<RunResult> {
    const startedMs = this.deps.clock.now();
    const window = { from: await this.deps.settings.get(SCAN_FROM_SETTING), to: iso(startedMs) };
    const postingDate = options.postingDate ?? iso(startedMs).slice(0, 10);
    const result: RunResult = { transfers: [], settled: 0 };
    let after: string | null = null;
    for (;;) {
      const accounts = await this.deps.settlements.accountIdsAfter(after, ACCOUNT_PAGE);
      for (const accountId of accounts) {
        result.settled += await this.settleAccount(accountId, window, postingDate);
        result.transfers.push(...(await this.completeOpenTransfers(accountId)));
      }
      if (accounts.length < ACCOUNT_PAGE) break;
      after = accounts[accounts.length - 1]!;
    }
    // Only a run that went through every merchant moves the scan start (never backwards).
    const next = iso(startedMs - SCAN_OVERLAP_MS);
    if (window.from === null || next > window.from) await this.deps.settings.set(SCAN_FROM_SETTING, next);
    this.deps.events?.logEvent('settlement.run', { postingDate, transfers: result.transfers.length, rows: result.settled });
    return result;
  }

  private async settleAccount(accountId: string, window: { from: string | null; to: string }, postingDate: string): Promise<number> {
    let settled = 0;
    let after: ScanPosition | null = null;
    for (;;) {
      const batch = await this.deps.settlements.settleable(accountId, window, after, this.batchSize);
      if (batch.length === 0) return settled;
      // Skips what earlier runs settled (the scan overlaps them); a concurrent run's claims are
      // caught by the insert's unique operation_id.
      const done = await this.deps.settlements.settledAmong(batch.map((op) => op.operationId));
      const fresh = batch.filter((op) => !done.has(op.operationId));
      if (fresh.length) settled += await this.settleBatch(accountId, fresh, postingDate);
      const last = batch[batch.length - 1]!;
      after = { finalizedAt: last.finalizedAt, id: last.operationId };
      if (batch.length < this.batchSize) return settled;
    }
  }

  /** One commit: the batch's rows and the transfers' totals, per currency. */
  private async settleBatch(accountId: string, batch: SettleableOperation[], postingDate: string): Promise<number> {
    const byCurrency = new Map<string, SettleableOperation[]>();
    for (const op of batch) {
      const group = byCurrency.get(op.currency);
      if (group) group.push(op);
      else byCurrency.set(op.currency, [op]);
    }
    // Locks taken in one order (currency) so that two concurrent runs cannot deadlock.
    const currencies = [...byCurrency.keys()].sort();
    return this.deps.transaction(async (repos) => {
      const now = iso(this.deps.clock.now());
      let inserted = 0;
      for (const currency of currencies) {
        const transfer = await repos.settlements.lockOpenTransfer(accountId, currency, now, () => this.newTransfer(accountId, currency, postingDate, now));
        const rows = byCurrency.get(currency)!.map((op) => this.settlementRow(op, transfer, now));
        const claimed = await repos.settlements.insertTransactions(rows);
        if (claimed.length) await repos.settlements.addToTransfer(transfer.id, deltaOf(claimed), now);
        inserted += claimed.length;
      }
      return inserted;
    });
  }

  private newTransfer(accountId: string, currency: string, postingDate: string, now: string): NewTransfer {
    return {
      id: newId(),
      accountId,
      currency,
      acquirer: this.acquirer,
      settlementName: `${this.acquirer} settlement ${postingDate} ${currency}`,
      settlementIds: [agreementIdOf(this.acquirer, accountId)],
      postingDate,
      acquirerReference: `STL${postingDate.replaceAll('-', '')}${randomBytes(5).toString('hex').toUpperCase()}`,
      openedAt: now,
      updatedAt: now,
    };
  }

  private settlementRow(op: SettleableOperation, transfer: SettlementTransfer, now: string): SettlementTransaction {
    const { gross, adjustments, net } = settleAmounts(this.deps.schedule, op);
    const fee = (type: TransactionFeeType) => moneyNumber(adjustments.find((a) => a.type === type)!.amount);
    return {
      id: newId(),
      settlementTransferId: transfer.id,
      accountId: op.accountId,
      operationId: op.operationId,
      operationType: op.type,
      transactionId: op.transactionId,
      agreementId: agreementIdOf(this.acquirer, op.accountId),
      merchantReference: op.merchantReference,
      acquirerReference: op.acquirerReference,
      // A transfer continued by a later run keeps one posting date for all its rows.
      postingDate: transfer.postingDate,
      currency: op.currency,
      grossAmount: moneyNumber(gross),
      acquirerFee: fee('ACQUIRER_FEE'),
      interchangeFee: fee('INTERCHANGE_FEE'),
      schemeFee: fee('SCHEME_FEE'),
      netAmount: moneyNumber(net),
      createdAt: now,
    };
  }

  /** Completes the merchant's OPEN transfers (this run's, and any a crashed run left behind). */
  private async completeOpenTransfers(accountId: string): Promise<SettlementTransfer[]> {
    const done: SettlementTransfer[] = [];
    for (const id of await this.deps.settlements.openTransferIds(accountId)) {
      const ready = await this.deps.transaction(async (repos) => {
        const now = iso(this.deps.clock.now());
        const locked = await repos.settlements.lockTransfer(id, now);
        if (!locked) return null; // completed by a concurrent run
        if (locked.transactionsCount === 0) {
          await repos.settlements.deleteEmptyTransfer(id);
          return null;
        }
        // The running totals were added batch by batch; the rows themselves must agree to the cent.
        const sums = await repos.settlements.sumTransactions(id);
        if (!sameTotals(sums, locked))
          throw new Error(
            `settlement transfer ${id}: running totals differ from its transactions (count ${locked.transactionsCount} vs ${sums.count}, net ${locked.transactionsNetAmount} vs ${sums.net})`,
          );
        const adjustments = transferAdjustments(this.deps.schedule, locked.currency);
        const net = adjustments.reduce((sum, a) => sum + a.amount, BigInt(locked.transactionsNetAmount));
        const transfer = await repos.settlements.completeTransfer(id, {
          adjustments: adjustments.map((a) => ({ ...a, amount: moneyNumber(a.amount) })),
          netAmount: moneyNumber(net),
          createdAt: now,
        });
        await repos.events.append(transfer.accountId, TRANSFER_READY_EVENT, { settlementTransfer: settlementTransferWire(transfer) });
        return transfer;
      });
      if (ready) done.push(ready);
    }
    return done;
  }

  // --- the merchant's reads ---

  async getTransfer(accountId: string, id: string): Promise<SettlementTransfer> {
    const transfer = await this.deps.settlements.findTransfer(accountId, id);
    if (!transfer) throw notFound('settlement transfer');
    return transfer;
  }

  listTransfers(accountId: string, after: Keyset | null, limit: number): Promise<SettlementTransfer[]> {
    return this.deps.settlements.listTransfers(accountId, after, limit);
  }

  async listTransactions(accountId: string, transferId: string, after: Keyset | null, limit: number) {
    const transfer = await this.getTransfer(accountId, transferId);
    return this.deps.settlements.listTransactions(transfer.id, after, limit);
  }
}

/** Sums of the rows a commit inserted, added to their transfer in that same commit. */
export function deltaOf(rows: SettlementTransaction[]): TransferDelta {
  const delta: TransferDelta = { count: rows.length, gross: 0n, acquirerFee: 0n, interchangeFee: 0n, schemeFee: 0n, net: 0n };
  for (const r of rows) {
    delta.gross += BigInt(r.grossAmount);
    delta.acquirerFee += BigInt(r.acquirerFee);
    delta.interchangeFee += BigInt(r.interchangeFee);
    delta.schemeFee += BigInt(r.schemeFee);
    delta.net += BigInt(r.netAmount);
  }
  return delta;
}

function sameTotals(sums: TransferDelta, t: SettlementTransfer): boolean {
  return (
    sums.count === t.transactionsCount &&
    sums.gross === BigInt(t.grossAmount) &&
    sums.acquirerFee === BigInt(t.acquirerFeeAmount) &&
    sums.interchangeFee === BigInt(t.interchangeFeeAmount) &&
    sums.schemeFee === BigInt(t.schemeFeeAmount) &&
    sums.net === BigInt(t.transactionsNetAmount)
  );
}
