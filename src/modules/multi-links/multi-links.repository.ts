import type { MultiLink, MultiLinkState } from './multi-link.js';

export interface MultiLinkFilter {
  pointOfSaleId?: string | undefined;
  state?: MultiLinkState | undefined;
  /** Inclusive bounds on createdAt (ISO). */
  createdBefore?: string | undefined;
  createdAfter?: string | undefined;
}

export type MultiLinkChanges = Pick<MultiLink, 'state' | 'stateChangedAt' | 'updatedAt'>;

export interface MultiLinksRepository {
  /** The link and its order lines, in one commit when called on a transaction's repositories. */
  insert(link: MultiLink): Promise<void>;
  findById(accountId: string, id: string): Promise<MultiLink | null>;
  /** Any account: the public page of the link (its id is the only key the customer has). */
  findByIdAnyAccount(id: string): Promise<MultiLink | null>;
  /** The link an idempotent request created (a retry resuming after a crash). */
  findByIdempotencyKey(accountId: string, key: string): Promise<MultiLink | null>;
  /** Newest first (createdAt desc, id desc). */
  list(accountId: string, filter: MultiLinkFilter, offset: number, limit: number): Promise<{ items: MultiLink[]; total: number }>;
  /** Applies `changes` only while the link is in `expectedState`; false when it was not (lost a race). */
  updateIfState(accountId: string, id: string, expectedState: MultiLinkState, changes: MultiLinkChanges): Promise<boolean>;
}
