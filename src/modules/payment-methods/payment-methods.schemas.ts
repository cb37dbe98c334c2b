import { Type } from '@sinclair/typebox';
import { PageQuery } from '../../shared/pagination.js';
import { DateTime, Nullable, StringEnum, Uuid } from '../../shared/wire.js';
import { PAYMENT_METHOD_TYPES } from '../transactions/transaction.js';
import type { PaymentMethod } from './payment-method.js';

/**
 * A card as sent by the client everywhere (INTERFACE §7). The schema checks types only; the
 * card rules (Luhn, lengths, expiry against the service clock) are in card.ts so that every
 * flow reports them the same way.
 */
export const CardInputSchema = Type.Object({
  number: Type.String({ minLength: 1, maxLength: 32, description: 'Digits only.' }),
  expiryMonth: Type.Integer({ description: '1–12.' }),
  expiryYear: Type.Integer({ description: 'Four digits.' }),
  cvc: Type.String({ minLength: 1, maxLength: 8, description: '3 or 4 digits.' }),
  holderName: Type.Optional(Nullable(Type.String({ maxLength: 128 }))),
});

export const PaymentMethodRecord = Type.Object({
  id: Uuid,
  type: StringEnum(PAYMENT_METHOD_TYPES),
  subType: Nullable(Type.String()),
  expiry: Nullable(Type.String({ format: 'date' })),
  displayText: Nullable(Type.String()),
  holderName: Nullable(Type.String()),
  customerId: Nullable(Type.String()),
  createdAt: DateTime,
});

export const PaymentMethodResponse = Type.Object({ paymentMethod: PaymentMethodRecord });
export const PaymentMethodParams = Type.Object({ paymentMethodId: Uuid });
export const PaymentMethodListQuery = Type.Composite([PageQuery, Type.Object({ customerId: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })) })]);

/** Entity → wire record (INTERFACE §7): no account id, no vault or card internals. */
export function paymentMethodWire(pm: PaymentMethod) {
  return {
    id: pm.id,
    type: pm.type,
    subType: pm.subType,
    expiry: pm.expiry,
    displayText: pm.displayText,
    holderName: pm.holderName,
    customerId: pm.customerId,
    createdAt: pm.createdAt,
  };
}
