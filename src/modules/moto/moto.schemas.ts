import { Type } from '@sinclair/typebox';
import { Amount, Attributes, Currency, StringEnum, Url, Uuid } from '../../shared/wire.js';
import { CardInputSchema } from '../payment-methods/payment-methods.schemas.js';
import { INSTANT_CAPTURE_MODES } from '../transactions/transaction.js';
import { notificationExample, notificationResponse } from '../transactions/notification.js';
import { transactionExample } from '../transactions/transactions.schemas.js';

/** POST /moto (INTERFACE §7): the transaction and the raw card (needs the `moto` capability). */
export const MotoBody = Type.Object(
  {
    transaction: Type.Object({
      pointOfSaleId: Uuid,
      reference: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
      amount: Amount,
      currency: Currency,
      instantCapture: Type.Optional(StringEnum(INSTANT_CAPTURE_MODES)),
      textOnStatement: Type.Optional(Type.String({ minLength: 1, maxLength: 39 })),
      notificationUrl: Type.Optional(Url),
      customerId: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
      attributes: Type.Optional(Attributes),
    }),
    card: CardInputSchema,
  },
  {
    examples: [
      {
        transaction: {
          pointOfSaleId: '571e0f76-1342-418a-902b-27dd6fc9543e',
          reference: 'phone-order-311',
          amount: 7900,
          currency: 'EUR',
          instantCapture: 'NO_VOID',
          customerId: 'customer-81',
        },
        card: { number: '4111111111111111', expiryMonth: 12, expiryYear: 2030, cvc: '123', holderName: 'Test Holder' },
      },
    ],
  },
);

const motoTransaction = (changes: Record<string, unknown>) =>
  transactionExample({
    id: 'H04RM62V3ZE',
    subscriptionId: null,
    createdAt: '2026-11-25T14:02:11.396Z',
    sessionId: null,
    paymentMethodId: '01a236ca-87a7-717a-b54c-6c7d73a26377',
    amount: 7900,
    instantCapture: 'NO_VOID',
    notificationUrl: null,
    reference: 'phone-order-311',
    exemptions: null,
    clientIp: null,
    type: 'MOTO',
    ...changes,
  });
const motoOperation = (id: string, type: string, state: string, errorCode: string | null, reference: string | null, at: string) => ({
  id,
  referenceTransactionOperationId: reference,
  amount: 7900,
  state,
  transactionId: 'H04RM62V3ZE',
  type,
  errorCode,
  createdAt: at,
  finalizedAt: at,
});

/** The authorization result: approved and captured at once (NO_VOID), or declined. */
export const MotoResponse = notificationResponse([
  notificationExample(
    motoTransaction({}),
    [
      motoOperation('01a236ca-87ac-702e-9aaa-ca785c132adc', 'AUTHORIZATION', 'SUCCESS', null, null, '2026-11-25T14:02:11.406Z'),
      motoOperation('01a236ca-87b0-7e1c-8c2d-1f0a9b3c4d5e', 'CAPTURE', 'SUCCESS', null, '01a236ca-87ac-702e-9aaa-ca785c132adc', '2026-11-25T14:02:11.411Z'),
    ],
    { authorized: 7900, captured: 7900 },
  ),
  notificationExample(
    motoTransaction({ state: 'FAILED', errorCode: 'INSUFFICIENT_FUNDS', externalStatusCodes: { terminal: null, acquirer: '51', network: '51', sca: null } }),
    [motoOperation('01a236ca-87ac-702e-9aaa-ca785c132adc', 'AUTHORIZATION', 'FAILED', 'INSUFFICIENT_FUNDS', null, '2026-11-25T14:02:11.406Z')],
    {},
  ),
]);
