/**
 * An account's acquirer agreement (INTERFACE §12.1): which acquirer moves its card money, with the
 * merchant's API key there (sealed), its MCC and its default text on statement.
 *
 * Rows are append-only: a PUT writes a new row and marks the previous current one removed in the
 * same commit; a DELETE marks the current one removed. A row never changes otherwise, so a
 * transaction that names the row that authorized it keeps its acquirer and key for its captures,
 * refunds and voids whatever happens to the agreement afterwards.
 */

export const ACQUIRERS = ['sandbox', 'clearhaus'] as const;
export type AcquirerName = (typeof ACQUIRERS)[number];

/** The MCC of a sandbox agreement that names none: the sandbox agreement's MCC (SANDBOX_ACQUIRER_AGREEMENT of the transactions module). */
export const SANDBOX_DEFAULT_MCC = '5999';

/** A merchant category code: four digits. */
export const MCC_PATTERN = /^[0-9]{4}$/;
/** Clearhaus API keys are UUIDs (any version; compared case-insensitively by Clearhaus, kept as sent). */
export const API_KEY_PATTERN = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
/** Text on the cardholder's statement: 2–22 printable ASCII characters (Clearhaus's rule). */
export const TEXT_ON_STATEMENT_PATTERN = /^[\x20-\x7e]{2,22}$/;

export const THREE_DS_PROVIDERS = ['3dsecure.io'] as const;
export type ThreeDSProviderName = (typeof THREE_DS_PROVIDERS)[number];

/** One stored row, the API keys sealed (src/security/secret-box.ts). */
export interface AcquirerAgreement {
  id: string;
  accountId: string;
  acquirer: AcquirerName;
  /** The merchant's API key at the acquirer, sealed; null for sandbox. */
  apiKeySealed: string | null;
  mcc: string;
  textOnStatement: string | null;
  /** The 3DS Server of the payment window (INTERFACE §13) and the merchant's key there, sealed; null: none. */
  threeDSecure: { provider: ThreeDSProviderName; apiKeySealed: string } | null;
  /** When the account's agreement was first created: carried from row to row by each PUT. */
  createdAt: string;
  /** When this row was written (the PUT that made it). */
  updatedAt: string;
  /** When a later PUT replaced it or a DELETE removed it; null while it is the account's current agreement. */
  removedAt: string | null;
}

/** What a PUT writes; the repository sets createdAt (the current row's, else `at`), updatedAt (`at`) and removedAt (null). */
export type NewAcquirerAgreement = Omit<AcquirerAgreement, 'createdAt' | 'updatedAt' | 'removedAt'>;

/** What the payment engine needs to talk to the agreement's acquirer; the API key opened from the vault. */
export interface AcquirerCredentials {
  /** The agreement row: a transaction keeps it, so its later operations go to the same acquirer with the same key. */
  id: string;
  accountId: string;
  acquirer: AcquirerName;
  mcc: string;
  textOnStatement: string | null;
  /** The merchant's API key in clear (null for sandbox): never logged, returned or stored elsewhere. */
  apiKey: string | null;
  /** The 3DS Server and the merchant's key there, in clear (same rules as apiKey); null: none. */
  threeDSecure: { provider: ThreeDSProviderName; apiKey: string } | null;
}

/** The record the partner API shows: never the key. */
export interface AcquirerAgreementView {
  acquirer: AcquirerName;
  mcc: string;
  textOnStatement: string | null;
  createdAt: string;
  updatedAt: string;
}

export const agreementView = (row: AcquirerAgreement): AcquirerAgreementView => ({
  acquirer: row.acquirer,
  mcc: row.mcc,
  textOnStatement: row.textOnStatement,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
});
