/**
 * Clearhaus `status.code` → our errorCode (INTERFACE §12.3) and a short English message (meanings
 * from clearhaus.md §3.1). Only 20000 approves; a 4xxxx declines (an unknown one as
 * ACQUIRER_DECLINED); a 5xxxx is Clearhaus's own error, whose outcome is unknown.
 */
import type { ExternalStatusCodes } from '../../modules/transactions/transaction.js';

export const APPROVED_CODE = 20000;
export const CLEARHAUS_ERROR_CODE = 50000;

interface CodeRow {
  errorCode: string;
  message: string;
}

const row = (errorCode: string, message: string): CodeRow => ({ errorCode, message });

/** Every code Clearhaus has published (40190 from older docs included), one row each. */
export const STATUS_CODES: ReadonlyMap<number, CodeRow> = new Map([
  [20000, row('APPROVED', 'Approved.')],
  [40000, row('ACQUIRER_DECLINED', 'General input error.')],
  [40110, row('INVALID_CARD_NUMBER', 'Invalid card number.')],
  [40111, row('ACQUIRER_DECLINED', 'Unsupported card scheme.')],
  [40120, row('INVALID_CVC', 'Invalid CSC.')],
  [40130, row('CARD_EXPIRED', 'Invalid expiry date.')],
  [40135, row('CARD_EXPIRED', 'Card expired.')],
  [40140, row('ACQUIRER_DECLINED', 'Invalid currency.')],
  [40150, row('ACQUIRER_DECLINED', 'Invalid text on statement.')],
  [40190, row('ACQUIRER_DECLINED', 'Invalid transaction.')],
  [40200, row('ACQUIRER_DECLINED', 'Clearhaus rule violation.')],
  [40300, row('REJECTED_BY_SCA', '3-D Secure problem.')],
  [40310, row('REJECTED_BY_SCA', '3-D Secure authentication failure.')],
  [40400, row('ISSUER_DOWN', 'Backend problem.')],
  [40410, row('DECLINED_BY_ISSUER_OR_SCHEME', 'Declined by issuer or card scheme.')],
  [40411, row('CARD_RESTRICTED', 'Card restricted.')],
  [40412, row('CARD_LOST_OR_STOLEN', 'Card lost or stolen.')],
  [40413, row('INSUFFICIENT_FUNDS', 'Insufficient funds.')],
  [40414, row('SUSPECTED_FRAUD', 'Suspected fraud.')],
  [40415, row('AMOUNT_LIMIT_EXCEEDED', 'Amount limit exceeded.')],
  [40416, row('SCA_REQUIRED', 'Additional authentication required.')],
  [40420, row('CARD_BLOCKED', 'Merchant blocked by cardholder.')],
  [50000, row('ACQUIRER_DOWN', 'Clearhaus error.')],
]);

/** approved: 20000 · declined: any 4xxxx · clearhaus_error: any 5xxxx · unknown: anything else (read as in doubt). */
export type CodeClass = 'approved' | 'declined' | 'clearhaus_error' | 'unknown';

export function classifyStatusCode(code: number): CodeClass {
  if (code === APPROVED_CODE) return 'approved';
  if (code >= 40000 && code <= 49999) return 'declined';
  if (code >= 50000 && code <= 59999) return 'clearhaus_error';
  return 'unknown';
}

/** The errorCode of a code that is not an approval: the table's, else by class. */
export function errorCodeFor(code: number): string {
  const known = STATUS_CODES.get(code);
  if (known && code !== APPROVED_CODE) return known.errorCode;
  return classifyStatusCode(code) === 'clearhaus_error' ? 'ACQUIRER_DOWN' : 'ACQUIRER_DECLINED';
}

/** The table's message for a code, or a generic one naming the code. */
export function messageFor(code: number): string {
  return STATUS_CODES.get(code)?.message ?? `Clearhaus answered status ${code}.`;
}

/** externalStatusCodes of a Clearhaus answer: the status code as a string under `acquirer`. */
export const externalCodes = (code: number | null): ExternalStatusCodes => ({
  terminal: null,
  acquirer: code === null ? null : String(code),
  network: null,
  sca: null,
});
