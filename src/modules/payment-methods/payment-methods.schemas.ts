import { Type } from '@sinclair/typebox';
import { PageEnvelope, pageExample, PageQuery } from '../../shared/pagination.js';
import { DateTime, Nullable, NullableStringEnum, StringEnum, Uuid } from '../../shared/wire.js';
import { PAYMENT_METHOD_TYPES } from '../transactions/transaction.js';
import { type CardObject } from './card.js';
import { cardObject, displayTextOf, type PaymentMethod } from './payment-method.js';

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
  accountUpdatesEnabled: Type.Boolean({ description: 'Enrolled in the account updater (cards only).' }),
  createdAt: DateTime,
});

const NullableString = Nullable(Type.String());

/** The card object of the NotificationWebhook and of GET /payment-methods/{id} (INTERFACE §8, §11.1). */
export const CardRecord = Type.Object({
  pan: Type.String({ description: 'Masked: the first 8 digits, X for each hidden digit, the last 4 (41111111XXXX1111).' }),
  expireMonth: Type.String({ pattern: '^\\d{2}$', description: 'Two digits: "07".' }),
  expireYear: Type.String({ pattern: '^\\d{2}$', description: 'Two digits: "35".' }),
  par: NullableString,
  Issuer: NullableString,
  Scheme: NullableString,
  Country: Nullable(Type.String({ description: 'ISO 3166 alpha-2.' })),
  Segment: NullableStringEnum(['consumer', 'business', 'payouts'] as const),
  Funding: NullableStringEnum(['debit', 'credit', 'prepaid'] as const),
});

/** The sandbox Visa a customer stored in a CIT session. */
const PAYMENT_METHOD_EXAMPLE = {
  id: '59803fc4-a7bb-40ea-b77e-13bf5457b04f',
  type: 'CARD',
  subType: 'Visa',
  expiry: '2030-12-31',
  displayText: '41111111XXXX1111',
  holderName: 'Test Holder',
  customerId: 'customer-81',
  accountUpdatesEnabled: false,
  createdAt: '2026-11-25T13:29:04.806Z',
};
const CARD_RECORD_EXAMPLE = {
  pan: '41111111XXXX1111',
  expireMonth: '12',
  expireYear: '30',
  par: 'S0016003394DCDCA3ACB6D8B64A8F',
  Issuer: 'Sandbox Bank',
  Scheme: 'VISA',
  Country: 'DK',
  Segment: 'consumer',
  Funding: 'credit',
};

export const PaymentMethodResponse = Type.Object({ paymentMethod: PaymentMethodRecord }, { examples: [{ paymentMethod: PAYMENT_METHOD_EXAMPLE }] });
export const PaymentMethodList = PageEnvelope(PaymentMethodResponse, {
  examples: [pageExample('/payment-methods', [{ paymentMethod: PAYMENT_METHOD_EXAMPLE }])],
});
/** GET /payment-methods/{id} and the account-update answers (INTERFACE §11.4): `card` null for other methods. */
export const PaymentMethodDetailResponse = Type.Object(
  { paymentMethod: PaymentMethodRecord, card: Nullable(CardRecord) },
  { examples: [{ paymentMethod: PAYMENT_METHOD_EXAMPLE, card: CARD_RECORD_EXAMPLE }] },
);
/** The card once enrolled in the account updater. */
export const AccountUpdatesResponse = Type.Object(PaymentMethodDetailResponse.properties, {
  examples: [{ paymentMethod: { ...PAYMENT_METHOD_EXAMPLE, accountUpdatesEnabled: true }, card: CARD_RECORD_EXAMPLE }],
});
/** The enrolled card after the issuer's new expiry (September 2031). */
export const AccountUpdateResponse = Type.Object(PaymentMethodDetailResponse.properties, {
  examples: [
    {
      paymentMethod: { ...PAYMENT_METHOD_EXAMPLE, expiry: '2031-09-30', accountUpdatesEnabled: true },
      card: { ...CARD_RECORD_EXAMPLE, expireMonth: '09', expireYear: '31' },
    },
  ],
});
export const PaymentMethodParams = Type.Object({ paymentMethodId: Uuid });
export const AccountUpdatesBody = Type.Object({ enabled: Type.Boolean() }, { examples: [{ enabled: true }, { enabled: false }] });

/**
 * The sandbox account updater (INTERFACE §11.4): the issuer's new expiry, or the card it reissued.
 * One of the two; checked by the service (the card rules, and which one was sent).
 */
export const AccountUpdateBody = Type.Object(
  {
    expiryMonth: Type.Optional(Type.Integer({ description: '1–12.' })),
    expiryYear: Type.Optional(Type.Integer({ description: 'Four digits.' })),
    card: Type.Optional(
      Type.Object({
        number: Type.String({ minLength: 1, maxLength: 32, description: 'Digits only.' }),
        expiryMonth: Type.Integer({ description: '1–12.' }),
        expiryYear: Type.Integer({ description: 'Four digits.' }),
        cvc: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 8, description: '3 or 4 digits; not needed.' }))),
        holderName: Type.Optional(Nullable(Type.String({ maxLength: 128 }))),
      }),
    ),
  },
  {
    examples: [{ expiryMonth: 9, expiryYear: 2031 }, { card: { number: '5555555555554444', expiryMonth: 3, expiryYear: 2032, holderName: 'Test Holder' } }],
  },
);
export const PaymentMethodListQuery = Type.Composite([PageQuery, Type.Object({ customerId: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })) })]);

/** Entity → wire record (INTERFACE §7): no account id, no vault or card internals. */
export function paymentMethodWire(pm: PaymentMethod) {
  return {
    id: pm.id,
    type: pm.type,
    subType: pm.subType,
    expiry: pm.expiry,
    displayText: displayTextOf(pm),
    holderName: pm.holderName,
    customerId: pm.customerId,
    accountUpdatesEnabled: pm.accountUpdatesEnabled,
    createdAt: pm.createdAt,
  };
}

/** `{paymentMethod, card}` (INTERFACE §11.4). */
export function paymentMethodDetailWire(pm: PaymentMethod): { paymentMethod: ReturnType<typeof paymentMethodWire>; card: CardObject | null } {
  return { paymentMethod: paymentMethodWire(pm), card: cardObject(pm) };
}
