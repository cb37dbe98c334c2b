import { Type } from '@sinclair/typebox';
import { DateTime, Nullable, StringEnum } from '../../shared/wire.js';
import { ACQUIRERS, SANDBOX_DEFAULT_MCC } from './acquirer-agreement.js';

export { AccountParams } from '../accounts/accounts.schemas.js';

/**
 * The body's types only: the service checks the values (UUID, four digits, printable ASCII) and
 * the fields that belong to the acquirer, so that each refusal says what is expected in words, and
 * refuses fields it does not know (INTERFACE §12.1).
 */
export const PutAcquirerAgreementBody = Type.Object(
  {
    acquirer: StringEnum(ACQUIRERS, {
      description:
        "`sandbox` (the simulator of INTERFACE §9) or `clearhaus`. `clearhaus` needs the deployment's Clearhaus signing key (CLEARHAUS_SIGNING_KEY_ID).",
    }),
    apiKey: Type.Optional(
      Type.String({
        description: "clearhaus only, and required there: the merchant's Clearhaus API key, a UUID. Sealed at rest; never returned, logged or shown.",
        writeOnly: true,
        examples: ['0f3a3c52-8f9e-4f3b-9a4e-2d1b6c7e8f90'],
      }),
    ),
    mcc: Type.Optional(
      Type.String({
        description: `Merchant category code, 4 digits (\`^[0-9]{4}$\`). Required for clearhaus; a sandbox agreement without one gets ${SANDBOX_DEFAULT_MCC}.`,
        examples: ['5999'],
      }),
    ),
    textOnStatement: Type.Optional(
      Nullable(
        Type.String({
          description:
            "Default text on the cardholder's statement: 2–22 printable ASCII characters. A payment's own `textOnStatement` wins when it meets the acquirer's rules. Null or absent: none.",
          examples: ['SHOP.EXAMPLE.COM'],
        }),
      ),
    ),
    threeDSecure: Type.Optional(
      Nullable(
        Type.Object(
          {
            provider: Type.Optional(Type.String({ description: '`3dsecure.io`, the only provider today.', examples: ['3dsecure.io'] })),
            apiKey: Type.Optional(
              Type.String({
                description: "The merchant's API key at the provider, a UUID. Sealed at rest; never returned, logged or shown.",
                writeOnly: true,
                examples: ['7d1c2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f'],
              }),
            ),
          },
          {
            description:
              'clearhaus only (INTERFACE §13): the 3-D Secure server that authenticates customers in the payment window before the authorization. Null or absent: none. Not shown in the record.',
          },
        ),
      ),
    ),
  },
  {
    description: 'The new agreement; it replaces the current one. Fields not listed are refused.',
    examples: [
      { acquirer: 'clearhaus', apiKey: '0f3a3c52-8f9e-4f3b-9a4e-2d1b6c7e8f90', mcc: '5999', textOnStatement: 'SHOP.EXAMPLE.COM' },
      {
        acquirer: 'clearhaus',
        apiKey: '0f3a3c52-8f9e-4f3b-9a4e-2d1b6c7e8f90',
        mcc: '5999',
        threeDSecure: { provider: '3dsecure.io', apiKey: '7d1c2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f' },
      },
      { acquirer: 'sandbox' },
    ],
  },
);

export const AcquirerAgreementRecord = Type.Object({
  acquirer: StringEnum(ACQUIRERS),
  mcc: Type.String({ description: 'Merchant category code, 4 digits.' }),
  textOnStatement: Nullable(Type.String({ description: "Default text on the cardholder's statement." })),
  createdAt: DateTime,
  updatedAt: DateTime,
});

const AGREEMENT_EXAMPLE = {
  acquirer: 'clearhaus',
  mcc: '5999',
  textOnStatement: 'SHOP.EXAMPLE.COM',
  createdAt: '2026-11-25T13:29:05.489Z',
  updatedAt: '2026-12-01T09:12:44.120Z',
};

export const AcquirerAgreementResponse = Type.Object(
  { acquirerAgreement: AcquirerAgreementRecord },
  {
    description:
      "The agreement, without its API key. `createdAt`: when the account's agreement was first created (kept across PUTs); `updatedAt`: the last PUT.",
    examples: [{ acquirerAgreement: AGREEMENT_EXAMPLE }],
  },
);
