import { Type } from '@sinclair/typebox';
import { Amount, DateTime, Nullable, StringEnum, TransactionId, Uuid } from '../../shared/wire.js';
import type { AcquirerRequest } from '../transactions/acquirer-requests.repository.js';

export const InDoubtRecord = Type.Object({
  operationId: Uuid,
  accountId: Uuid,
  transactionId: TransactionId,
  acquirer: Type.String({ description: 'The connector the request went to, e.g. `clearhaus`.' }),
  call: StringEnum(['authorize', 'capture', 'refund', 'void', 'renew', 'payout'] as const, { description: 'What was sent.' }),
  amount: Amount,
  currency: Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code.' }),
  sentAt: Type.String({ format: 'date-time', description: 'When the request was about to go out (recorded before sending).' }),
  inDoubtAt: DateTime,
  reason: Nullable(Type.String({ description: 'Why no answer is known: a timeout, a reset connection, an HTTP 5xx, a sender that stopped.' })),
  acquirerReference: Nullable(Type.String({ description: 'The id the acquirer named, if it answered with an error that carried one.' })),
});

const EXAMPLE = {
  operationId: '0b6a3c2e-4f57-4d7b-9a86-3f1f0b8f2c11',
  accountId: '5d0f1e9a-2b3c-4d5e-8f60-718293a4b5c6',
  transactionId: '0J5Z8Q2M4N6',
  acquirer: 'clearhaus',
  call: 'capture',
  amount: 2500,
  currency: 'DKK',
  sentAt: '2026-12-01T10:15:00.000Z',
  inDoubtAt: '2026-12-01T10:15:40.000Z',
  reason: 'no answer within 40000 ms',
  acquirerReference: null,
} as const;

export const InDoubtListResponse = Type.Object({ items: Type.Array(InDoubtRecord) }, { examples: [{ items: [EXAMPLE] }] });
export const InDoubtQuery = Type.Object({
  accountId: Type.Optional(Uuid),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100, description: 'At most this many, oldest first (default 100).' })),
});
export const InDoubtParams = Type.Object({ operationId: Uuid });
export const ResolveInDoubtBody = Type.Object(
  {
    outcome: StringEnum(['SUCCEEDED', 'FAILED'] as const, {
      description: 'What the acquirer says happened: SUCCEEDED applies it as approved, FAILED as declined (ACQUIRER_TIMEOUT).',
    }),
  },
  { additionalProperties: false, examples: [{ outcome: 'SUCCEEDED' }] },
);
export const ResolveInDoubtResponse = Type.Object(
  {
    operationId: Uuid,
    transactionId: TransactionId,
    state: StringEnum(['SUCCESS', 'FAILED'] as const),
    transactionState: StringEnum(['PENDING', 'PROCESSING', 'SUCCESS', 'FAILED'] as const),
  },
  { examples: [{ operationId: EXAMPLE.operationId, transactionId: EXAMPLE.transactionId, state: 'SUCCESS', transactionState: 'SUCCESS' }] },
);

export function inDoubtWire(r: AcquirerRequest) {
  return {
    operationId: r.operationId,
    accountId: r.accountId,
    transactionId: r.transactionId,
    acquirer: r.acquirer,
    call: r.call,
    amount: r.amount,
    currency: r.currency,
    sentAt: r.sentAt,
    inDoubtAt: r.inDoubtAt!,
    reason: r.inDoubtReason,
    acquirerReference: r.acquirerReference,
  };
}
