import { Type } from '@sinclair/typebox';
import { Amount, Attributes, Currency, DateOnly, Url, Uuid } from '../../shared/wire.js';

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
export const PayoutBody = Type.Object({ ...PayoutFields, notificationUrl: Url });
/** POST /payout-sync: the same without `notificationUrl`; the outcome is the response. */
export const SyncPayoutBody = Type.Object(PayoutFields);
