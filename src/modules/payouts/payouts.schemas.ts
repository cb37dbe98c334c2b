import { Type } from '@sinclair/typebox';
import { Amount, Attributes, Currency, DateOnly, Url, Uuid } from '../../shared/wire.js';
import { notificationExample, notificationResponse } from '../transactions/notification.js';
import { TransactionResponse, transactionExample } from '../transactions/transactions.schemas.js';

const PayoutFields = {
  pointOfSaleId: Uuid,
  amount: Amount,
  currency: Currency,
  paymentMethodId: Uuid,
  reference: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  textOnStatement: Type.Optional(Type.String({ minLength: 1, maxLength: 39 })),
  processor: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 10, description: 'Preferred processors.' })),
  attributes: Type.Optional(Attributes),
  customer: Type.Optional(
    Type.Object({
      firstName: Type.Optional(Type.String({ maxLength: 128 })),
      lastName: Type.Optional(Type.String({ maxLength: 128 })),
      ip: Type.Optional(Type.String({ maxLength: 64 })),
      birthdate: Type.Optional(DateOnly),
    }),
  ),
};

/** POST /payout (seed §2.4): asynchronous, the outcome goes to `notificationUrl`. */
/** EUR 50.00 paid out to the card a customer stored (sandbox card 4111111111111111). */
const PAYOUT_REQUEST_EXAMPLE = {
  pointOfSaleId: '571e0f76-1342-418a-902b-27dd6fc9543e',
  amount: 5000,
  currency: 'EUR',
  paymentMethodId: '59803fc4-a7bb-40ea-b77e-13bf5457b04f',
  reference: 'payout-555',
};

export const PayoutBody = Type.Object(
  { ...PayoutFields, notificationUrl: Url },
  { examples: [{ ...PAYOUT_REQUEST_EXAMPLE, notificationUrl: 'https://shop.example.com/payments/callback' }] },
);
/** POST /payout-sync: the same without `notificationUrl`; the outcome is the response. */
export const SyncPayoutBody = Type.Object(PayoutFields, { examples: [PAYOUT_REQUEST_EXAMPLE] });

/** POST /payout answers the accepted payout, PENDING: its outcome goes to notificationUrl. */
export const PayoutResponse = Type.Object(TransactionResponse.properties, {
  examples: [
    {
      transaction: transactionExample({
        id: 'DB6N00XX5F5',
        subscriptionId: null,
        state: 'PENDING',
        externalStatusCodes: null,
        createdAt: '2026-11-25T13:29:05.504Z',
        sessionId: null,
        amount: 5000,
        reference: 'payout-555',
        exemptions: null,
        clientIp: null,
        type: 'PAYOUT',
      }),
    },
  ],
});

/** POST /payout-sync answers the NotificationWebhook of the finished payout. */
export const SyncPayoutResponse = notificationResponse([
  notificationExample(
    transactionExample({
      id: 'H04RMC25Q7V',
      subscriptionId: null,
      createdAt: '2026-11-25T13:29:05.972Z',
      sessionId: null,
      amount: 5000,
      notificationUrl: null,
      reference: 'payout-555',
      exemptions: null,
      clientIp: null,
      type: 'PAYOUT',
    }),
    [
      {
        id: '01a236ca-89ec-7604-a19d-05c800109052',
        referenceTransactionOperationId: null,
        amount: 5000,
        state: 'SUCCESS',
        transactionId: 'H04RMC25Q7V',
        type: 'PAYOUT',
        errorCode: null,
        createdAt: '2026-11-25T13:29:05.972Z',
        finalizedAt: '2026-11-25T13:29:05.974Z',
      },
    ],
    { paidOut: 5000 },
  ),
]);
