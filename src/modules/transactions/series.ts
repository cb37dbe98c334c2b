/**
 * Stored cards as acquirer series (INTERFACE §12.3, Clearhaus `series[]`), for connectors that link
 * them (Acquirer.seriesReferences). The first approved customer payment that stores a card starts
 * its series; every merchant-initiated payment names the latest approved authorization of it, and
 * moves the reference on when approved. A card stored before it had a series under the payment's
 * agreement cannot be charged by the merchant there: INVALID_AGREEMENT, without a request.
 */
import type { Series } from '../../connectors/acquirer.js';
import type { CardSeries, PaymentMethod } from '../payment-methods/payment-method.js';
import type { AcquirerRoute } from './acquirer-routing.js';
import type { Operation, Transaction } from './transaction.js';

export type SeriesType = CardSeries['type'];

/** What the authorization carries: its series, none, or `missing` (a MIT whose card has no series at this agreement). */
export type SeriesDecision = Series | null | 'missing';

export function seriesFor(
  route: AcquirerRoute,
  tx: Pick<Transaction, 'flow'>,
  op: Pick<Operation, 'type'>,
  method: PaymentMethod | null,
  storesCard: SeriesType | null,
  sameAccount: boolean,
): SeriesDecision {
  if (!route.acquirer.seriesReferences || op.type !== 'AUTHORIZATION') return null;
  if (tx.flow === 'MIT') {
    const series = method?.series;
    return series && sameAccount ? { role: 'subsequent', previousId: series.reference } : 'missing';
  }
  return tx.flow === 'CIT' && storesCard ? { role: 'first', type: storesCard } : null;
}

/** The card's series once `series` was approved as `authorizationId` (null: it keeps none). */
export function seriesAfterApproval(series: Series | null, method: PaymentMethod | null, route: AcquirerRoute, authorizationId: string): CardSeries | null {
  if (!series || !method) return null;
  if (series.role === 'first') return { type: series.type, reference: authorizationId, agreementId: route.agreementId };
  // A later payment moves the reference on; the series stays with the agreement that started it.
  return { type: method.series?.type ?? 'recurring', reference: authorizationId, agreementId: method.series?.agreementId ?? route.agreementId };
}
