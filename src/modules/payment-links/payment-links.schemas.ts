import { Type } from '@sinclair/typebox';
import { PageQuery } from '../../shared/pagination.js';
import { DateTime, Nullable, StringEnum, Uuid } from '../../shared/wire.js';
import { CreateCitBody } from '../sessions/sessions.schemas.js';
import { type PaymentLink, PAYMENT_LINK_STATES } from './payment-link.js';

const NullableString = Nullable(Type.String());

/** POST /payment-links takes exactly the body of POST /cit (INTERFACE §7); the sessions module validates it. */
export const CreatePaymentLinkBody = CreateCitBody;

export const PaymentLinkRecord = Type.Object({
  id: Uuid,
  sessionId: Uuid,
  url: Type.String({ description: "Opens the hosted payment window of the link's session." }),
  state: StringEnum(PAYMENT_LINK_STATES),
  amount: Type.Integer(),
  currency: Type.String(),
  reference: NullableString,
  pointOfSaleId: Type.String(),
  customerId: NullableString,
  transactionId: Nullable(Type.String({ description: 'The approved transaction once PAID.' })),
  expiresAt: DateTime,
  stateChangedAt: DateTime,
  createdAt: DateTime,
});

export const PaymentLinkResponse = Type.Object({ paymentLink: PaymentLinkRecord });
export const PaymentLinkParams = Type.Object({ paymentLinkId: Uuid });
export const PaymentLinkListQuery = Type.Composite([
  PageQuery,
  Type.Object({
    state: Type.Optional(StringEnum(PAYMENT_LINK_STATES)),
    reference: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  }),
]);

/** Entity → wire record: no account id; the URL is built on the service's public base URL. */
export function paymentLinkWire(link: PaymentLink, windowUrl: string) {
  return {
    id: link.id,
    sessionId: link.sessionId,
    url: windowUrl,
    state: link.state,
    amount: link.amount,
    currency: link.currency,
    reference: link.reference,
    pointOfSaleId: link.pointOfSaleId,
    customerId: link.customerId,
    transactionId: link.transactionId,
    expiresAt: link.expiresAt,
    stateChangedAt: link.stateChangedAt,
    createdAt: link.createdAt,
  };
}
