import { Type } from '@sinclair/typebox';
import { DateTime, HeaderValue, Nullable, StringEnum, Url, Uuid } from '../../shared/wire.js';
import { EXEMPTIONS, INSTANT_CAPTURE_MODES, SCA_MODES } from '../transactions/transaction.js';

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

export const PointOfSaleResponse = Type.Object({ pointOfSale: PointOfSaleRecord, hostedConfiguration: HostedConfigurationRecord });

/** A single point of sale as its owner reads it (create, GET, rotation; never lists): with the credentials of its callbacks. */
export const PointOfSaleDetailResponse = Type.Object({
  pointOfSale: Type.Composite([
    PointOfSaleRecord,
    Type.Object({
      webhookAuthentication: Type.String({ description: 'The literal Authorization header value sent with every callback of this point of sale.' }),
      signingSecret: Type.String({
        pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$',
        description: 'Signs every callback (Standard Webhooks: headers webhook-id, webhook-timestamp, webhook-signature). Rotate with POST .../signing-secret.',
      }),
    }),
  ]),
  hostedConfiguration: HostedConfigurationRecord,
});

export const CreatePointOfSaleBody = Type.Object({
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
});

export const PointOfSaleParams = Type.Object({ pointOfSaleId: Uuid });
