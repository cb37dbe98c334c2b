import { Type } from '@sinclair/typebox';
import { PageEnvelope, pageExample, PageQuery } from '../../shared/pagination.js';
import { TRANSACTION_ID_PATTERN } from '../../shared/ids.js';
import { DateTime, Nullable, StringEnum, Uuid } from '../../shared/wire.js';
import { CreateCitBody } from '../sessions/sessions.schemas.js';
import { type PaymentLink, PAYMENT_LINK_STATES, PAYMENT_LINK_TIMEOUT_MINUTES } from './payment-link.js';

const NullableString = Nullable(Type.String());

/**
 * POST /payment-links takes the body of POST /cit (INTERFACE §7, §11.2); the sessions module
 * validates it. Only `timeout` is wider: a link lives longer than a checkout (§11.2: up to
 * 86,400 minutes, 60 days, which is also the default).
 */
export const CreatePaymentLinkBody = Type.Object(
  {
    ...CreateCitBody.properties,
    timeout: Type.Optional(
      Nullable(
        Type.Integer({
          minimum: 1,
          maximum: PAYMENT_LINK_TIMEOUT_MINUTES.max,
          description: `Minutes until the link expires: 1–${PAYMENT_LINK_TIMEOUT_MINUTES.max}; null or absent: ${PAYMENT_LINK_TIMEOUT_MINUTES.default} (60 days).`,
        }),
      ),
    ),
  },
  {
    examples: [
      {
        pointOfSaleId: '571e0f76-1342-418a-902b-27dd6fc9543e',
        amount: 4995,
        currency: 'EUR',
        reference: 'invoice-7731',
        customerId: 'customer-81',
        timeout: 10080,
        notificationUrl: 'https://shop.example.com/payments/callback',
      },
    ],
  },
);

/** A link's id: the transaction-id format (INTERFACE §11.5), or a UUID for links made before it. */
const UUID_PATTERN = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';
export const PaymentLinkId = Type.String({
  pattern: `^(?:${TRANSACTION_ID_PATTERN.slice(1, -1)}|${UUID_PATTERN})$`,
  description: '11 characters of Crockford base32 (links made before INTERFACE §11.5: a UUID).',
});

export const PaymentLinkRecord = Type.Object({
  id: PaymentLinkId,
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

export const PaymentLinkResponse = Type.Object(
  { paymentLink: PaymentLinkRecord },
  {
    examples: [
      {
        paymentLink: {
          id: 'VBE7204R11R',
          sessionId: '91279d8a-287c-4d56-ae5d-bca6d9b17c41',
          url: 'https://payments.example.com/pay/pk_um2YzGvb6CrZVFVH6k4fobk1uepvBcrs',
          state: 'ACTIVE',
          amount: 4995,
          currency: 'EUR',
          reference: 'invoice-7731',
          pointOfSaleId: '571e0f76-1342-418a-902b-27dd6fc9543e',
          customerId: 'customer-81',
          transactionId: null,
          expiresAt: '2026-12-02T13:29:05.399Z',
          stateChangedAt: '2026-11-25T13:29:05.399Z',
          createdAt: '2026-11-25T13:29:05.399Z',
        },
      },
    ],
  },
);
export const PaymentLinkList = PageEnvelope(PaymentLinkResponse, {
  examples: [pageExample('/payment-links', [...(PaymentLinkResponse.examples as unknown[])])],
});

/** POST /payment-links (INTERFACE §11.5): flat; GET answers the wrapped record. */
export const CreatePaymentLinkResponse = Type.Object(
  {
    id: PaymentLinkId,
    sessionId: Uuid,
    url: Type.String({ description: 'The customer-facing link: the hosted payment window of its session.' }),
    qrCode: Type.String({ description: 'A QR code of `url`: PNG, base64, without a data: prefix.' }),
  },
  {
    examples: [
      {
        id: 'VBE7204R11R',
        sessionId: '91279d8a-287c-4d56-ae5d-bca6d9b17c41',
        url: 'https://payments.example.com/pay/pk_um2YzGvb6CrZVFVH6k4fobk1uepvBcrs',
        qrCode: 'iVBORw0KGgoAAAANSUhEUgAAAUgAAAFICAYAAAAyFGczAAAAAklEQVR4AewaftIAAAku…',
      },
    ],
  },
);
export const PaymentLinkParams = Type.Object({ paymentLinkId: PaymentLinkId });
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
