import { Type } from '@sinclair/typebox';
import { Amount, Attributes, Currency, StringEnum, Url, Uuid } from '../../shared/wire.js';
import { CardInputSchema } from '../payment-methods/payment-methods.schemas.js';
import { INSTANT_CAPTURE_MODES } from '../transactions/transaction.js';

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
