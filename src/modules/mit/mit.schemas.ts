import { Type } from '@sinclair/typebox';
import { Amount, Attributes, Currency, ErrorResponse, Nullable, StringEnum, Url, Uuid } from '../../shared/wire.js';
import { INSTANT_CAPTURE_MODES } from '../transactions/transaction.js';
import { MIT_TRANSACTION_EXAMPLE, TransactionRecord } from '../transactions/transactions.schemas.js';

const Opt = <T extends Parameters<typeof Nullable>[0]>(schema: T) => Type.Optional(Nullable(schema));

/** Charges the card stored by a CIT with a subscription: EUR 15.00, captured at once. */
const MIT_REQUEST_EXAMPLE = {
  subscriptionId: 'cdbf1049-856b-45ca-835e-f968c7637235',
  amount: 1500,
  currency: 'EUR',
  reference: 'invoice-2025-11',
  instantCapture: 'NO_VOID',
  notificationUrl: 'https://shop.example.com/payments/callback',
};

/** One MIT (INTERFACE §7); also each entry of a batch. */
export const MitBody = Type.Object(
  {
    subscriptionId: Uuid,
    amount: Amount,
    currency: Opt(Currency),
    reference: Opt(Type.String({ minLength: 1, maxLength: 255 })),
    instantCapture: Opt(StringEnum(INSTANT_CAPTURE_MODES)),
    textOnStatement: Opt(Type.String({ minLength: 1, maxLength: 39 })),
    notificationUrl: Url,
    attributes: Opt(Attributes),
    customerId: Opt(Type.String({ minLength: 1, maxLength: 255, description: 'Ignored: the subscription names the customer.' })),
  },
  { examples: [MIT_REQUEST_EXAMPLE] },
);

export const MAX_BATCH = 500;

/** Entries are validated one by one in the service, so that one bad entry does not refuse the others. */
export const MitBatchBody = Type.Object(
  { transactions: Type.Array(Type.Unknown(), { minItems: 1, maxItems: MAX_BATCH, description: `1–${MAX_BATCH} MIT requests.` }) },
  {
    examples: [
      {
        transactions: [
          MIT_REQUEST_EXAMPLE,
          { ...MIT_REQUEST_EXAMPLE, subscriptionId: '0b6f3e2a-9d51-4c1e-8a7f-3c2d1e0f9a8b', amount: -5, reference: 'invoice-2025-12' },
        ],
      },
    ],
  },
);

export const MitResponse = Type.Object({ transaction: TransactionRecord }, { examples: [{ transaction: MIT_TRANSACTION_EXAMPLE }] });

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

export const MitBatchResponse = Type.Object(
  {
    transactions: Type.Array(
      Type.Object({
        transaction: Nullable(TransactionRecord),
        error: Nullable(BatchError),
        reference: Nullable(Type.String()),
      }),
    ),
  },
  {
    examples: [
      {
        transactions: [
          { transaction: MIT_TRANSACTION_EXAMPLE, error: null, reference: 'invoice-2025-11' },
          {
            transaction: null,
            error: { errorCode: 'VALIDATION_ERROR', message: 'The entry is invalid: amount.', errors: { amount: ['[min:0]: must be at least 0'] } },
            reference: 'invoice-2025-12',
          },
        ],
      },
    ],
  },
);
