import type { PaymentLink, PaymentLinkState } from './payment-link.js';

export interface PaymentLinkFilter {
  state?: PaymentLinkState | undefined;
  reference?: string | undefined;
}

export type PaymentLinkChanges = Partial<Pick<PaymentLink, 'state' | 'transactionId' | 'stateChangedAt'>> & { updatedAt: string };

export interface PaymentLinksRepository {
  insert(link: PaymentLink): Promise<void>;
  findById(accountId: string, id: string): Promise<PaymentLink | null>;
  findBySessionId(accountId: string, sessionId: string): Promise<PaymentLink | null>;
  /** Newest first (createdAt desc, id desc). */
  list(accountId: string, filter: PaymentLinkFilter, offset: number, limit: number): Promise<{ items: PaymentLink[]; total: number }>;
  /** ACTIVE links of the account whose expiresAt is at or before `nowIso`. */
  listOverdue(accountId: string, nowIso: string, limit: number): Promise<PaymentLink[]>;
  /** Applies `changes` only while the link is in `expectedState`; false when it was not (lost a race). */
  updateIfState(accountId: string, id: string, expectedState: PaymentLinkState, changes: PaymentLinkChanges): Promise<boolean>;
}
