import { Type } from '@sinclair/typebox';
import { Amount, Attributes, Currency, ErrorResponse, Nullable, StringEnum, Url, Uuid } from '../../shared/wire.js';
import { INSTANT_CAPTURE_MODES } from '../transactions/transaction.js';
import { TransactionRecord } from '../transactions/transactions.schemas.js';

const Opt = <T extends Parameters<typeof Nullable>[0]>(schema: T) => Type.Optional(Nullable(schema));

/** One MIT (INTERFACE §7); also each entry of a batch. */
export const MitBody = Type.Object({
  subscriptionId: Uuid,
  amount: Amount,
  currency: Opt(Currency),
  reference: Opt(Type.String({ minLength: 1, maxLength: 255 })),
  instantCapture: Opt(StringEnum(INSTANT_CAPTURE_MODES)),
  textOnStatement: Opt(Type.String({ minLength: 1, maxLength: 39 })),
  notificationUrl: Url,
  attributes: Opt(Attributes),
  customerId: Opt(Type.String({ minLength: 1, maxLength: 255, description: 'Ignored: the subscription names the customer.' })),
});

export const MAX_BATCH = 500;

/** Entries are validated one by one in the service, so that one bad entry does not refuse the others. */
export const MitBatchBody = Type.Object({
  transactions: Type.Array(Type.Unknown(), { minItems: 1, maxItems: MAX_BATCH, description: `1–${MAX_BATCH} MIT requests.` }),
});

export const MitResponse = Type.Object({ transaction: TransactionRecord });

/** 429 of the MIT routes: a request bucket of §5, or an ingestion cap of §11.8 (nothing was created). */
export const MitRateLimitedResponse = Type.Composite([ErrorResponse], {
  description:
    'RATE_LIMIT_REACHED: the request bucket (INTERFACE §5) or the per-merchant ingestion cap (§11.8: MIT transactions per minute, ' +
    'batch entries counted) is used up; nothing was created. Headers: Retry-After (s), X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset (unix s).',
});

export const BatchError = Type.Object({
  errorCode: Type.String(),
  message: Type.String(),
  errors: Type.Optional(Type.Record(Type.String(), Type.Array(Type.String()))),
});

export const MitBatchResponse = Type.Object({
  transactions: Type.Array(
    Type.Object({
      transaction: Nullable(TransactionRecord),
      error: Nullable(BatchError),
      reference: Nullable(Type.String()),
    }),
  ),
});
