import { Type } from '@sinclair/typebox';
import { PageEnvelope, pageExample } from '../../shared/pagination.js';
import { DateTime, HeaderValue, Nullable, StringEnum, Url, Uuid } from '../../shared/wire.js';
import { EXEMPTIONS, INSTANT_CAPTURE_MODES, SCA_MODES } from '../transactions/transaction.js';
import { DEFAULT_HOSTED_CONFIGURATION } from './point-of-sale.js';

export const HostedConfigurationRecord = Type.Object({
  instantCapture: StringEnum(INSTANT_CAPTURE_MODES),
  scaMode: StringEnum(SCA_MODES),
  timeout: Type.Integer({ description: 'Session lifetime in minutes.' }),
  notificationUrl: Nullable(Type.String()),
  successUrl: Nullable(Type.String()),
  failureUrl: Nullable(Type.String()),
  retryUrl: Nullable(Type.String()),
  maxAttempts: Type.Integer(),
  processor: Type.Array(Type.String()),
  exemptions: Type.Array(Type.String()),
  reportFailure: Type.Boolean(),
  reportExpired: Type.Boolean(),
});

export const HostedConfigurationInput = Type.Partial(
  Type.Object({
    instantCapture: StringEnum(INSTANT_CAPTURE_MODES),
    scaMode: StringEnum(SCA_MODES),
    timeout: Type.Integer({ minimum: 1, maximum: 43200 }),
    notificationUrl: Nullable(Url),
    successUrl: Nullable(Url),
    failureUrl: Nullable(Url),
    retryUrl: Nullable(Url),
    maxAttempts: Type.Integer({ minimum: 1, maximum: 10 }),
    processor: Type.Array(Type.String({ maxLength: 64 }), { maxItems: 10 }),
    exemptions: Type.Array(StringEnum(EXEMPTIONS), { maxItems: 2 }),
    reportFailure: Type.Boolean(),
    reportExpired: Type.Boolean(),
  }),
);

export const PointOfSaleRecord = Type.Object({
  id: Uuid,
  name: Type.String(),
  type: StringEnum(['ONLINE', 'PHYSICAL'] as const),
  domain: Type.String(),
  descriptor: Nullable(Type.String()),
  createdAt: DateTime,
  updatedAt: DateTime,
});

/** The web shop of the examples, with the defaults a session takes for what it leaves out. */
export const POINT_OF_SALE_EXAMPLE = {
  id: '571e0f76-1342-418a-902b-27dd6fc9543e',
  name: 'Web shop',
  type: 'ONLINE',
  domain: 'shop.example.com',
  descriptor: null,
  createdAt: '2026-11-24T09:12:40.253Z',
  updatedAt: '2026-11-24T09:12:40.253Z',
};
/** The card terminals' point of sale of the examples. */
export const PHYSICAL_POINT_OF_SALE_EXAMPLE = {
  ...POINT_OF_SALE_EXAMPLE,
  id: '710fe949-df64-4f3c-9c7f-e16153a026a9',
  name: 'Store Copenhagen',
  type: 'PHYSICAL',
  createdAt: '2026-11-24T09:13:02.276Z',
  updatedAt: '2026-11-24T09:13:02.276Z',
};
/** A new point of sale's: the defaults. */
const HOSTED_CONFIGURATION_EXAMPLE = DEFAULT_HOSTED_CONFIGURATION;

export const PointOfSaleResponse = Type.Object(
  { pointOfSale: PointOfSaleRecord, hostedConfiguration: HostedConfigurationRecord },
  { examples: [{ pointOfSale: POINT_OF_SALE_EXAMPLE, hostedConfiguration: HOSTED_CONFIGURATION_EXAMPLE }] },
);

export const PointOfSaleList = PageEnvelope(PointOfSaleResponse, {
  examples: [
    pageExample('/management/point-of-sales', [
      { pointOfSale: PHYSICAL_POINT_OF_SALE_EXAMPLE, hostedConfiguration: HOSTED_CONFIGURATION_EXAMPLE },
      { pointOfSale: POINT_OF_SALE_EXAMPLE, hostedConfiguration: HOSTED_CONFIGURATION_EXAMPLE },
    ]),
  ],
});

/** A single point of sale as its owner reads it (create, GET, rotation; never lists): with the credentials of its callbacks. */
export const PointOfSaleDetailResponse = Type.Object(
  {
    pointOfSale: Type.Composite([
      PointOfSaleRecord,
      Type.Object({
        webhookAuthentication: Type.String({ description: 'The literal Authorization header value sent with every callback of this point of sale.' }),
        signingSecret: Type.String({
          pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$',
          description:
            'Signs every callback (Standard Webhooks: headers webhook-id, webhook-timestamp, webhook-signature). Rotate with POST .../signing-secret.',
        }),
      }),
    ]),
    hostedConfiguration: HostedConfigurationRecord,
  },
  {
    examples: [
      {
        pointOfSale: {
          ...POINT_OF_SALE_EXAMPLE,
          webhookAuthentication: 'Bearer 3f9c2b7e51d04a8c',
          signingSecret: 'whsec_+U2nBTtZu3G//XrMd3QjujhGpbwVQAN51gSI5B9C4Ys=',
        },
        hostedConfiguration: HOSTED_CONFIGURATION_EXAMPLE,
      },
    ],
  },
);

export const CreatePointOfSaleBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 256 }),
    domain: Type.String({
      minLength: 1,
      maxLength: 253,
      pattern: '^[A-Za-z0-9.-]+$',
      description: 'Approved domain for callback, webhook and redirect URLs (and its sub-domains).',
    }),
    webhookAuthentication: HeaderValue('Literal Authorization header value sent with every callback (printable ASCII).'),
    type: Type.Optional(StringEnum(['ONLINE', 'PHYSICAL'] as const)),
    descriptor: Type.Optional(Type.String({ minLength: 1, maxLength: 22 })),
    hostedConfiguration: Type.Optional(HostedConfigurationInput),
  },
  {
    examples: [
      { name: 'Web shop', domain: 'shop.example.com', webhookAuthentication: 'Bearer 3f9c2b7e51d04a8c', type: 'ONLINE' },
      {
        name: 'Store Copenhagen',
        domain: 'shop.example.com',
        webhookAuthentication: 'Bearer 3f9c2b7e51d04a8c',
        type: 'PHYSICAL',
        descriptor: 'NORDIC COFFEE CPH',
      },
    ],
  },
);

export const PointOfSaleParams = Type.Object({ pointOfSaleId: Uuid });
