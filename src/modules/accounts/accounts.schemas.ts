import { Type } from '@sinclair/typebox';
import { PageEnvelope, pageExample } from '../../shared/pagination.js';
import { Currency, DateTime, Nullable, StringEnum, Uuid } from '../../shared/wire.js';

export const AccountRecord = Type.Object({
  id: Uuid,
  name: Type.String(),
  addressLineOne: Nullable(Type.String()),
  addressLineTwo: Nullable(Type.String()),
  city: Nullable(Type.String()),
  postalCode: Nullable(Type.String()),
  countryCode: Nullable(Type.String()),
  phone: Nullable(Type.String()),
  email: Type.String(),
  timezone: Type.String(),
  invoiceEmail: Nullable(Type.String()),
  invoiceAttention: Nullable(Type.String()),
  vat: Nullable(Type.String()),
  currencyCode: Type.String(),
  status: StringEnum(['PENDING', 'ACTIVE', 'CLOSED'] as const),
  capabilities: Type.Object({ moto: Type.Boolean(), syncPayout: Type.Boolean() }),
  createdAt: DateTime,
});
/** A merchant account just created: PENDING, no capabilities yet. */
const ACCOUNT_EXAMPLE = {
  id: '01a236ca-86c5-727b-8285-99017f402a3e',
  name: 'Nordic Coffee ApS',
  addressLineOne: null,
  addressLineTwo: null,
  city: null,
  postalCode: null,
  countryCode: null,
  phone: null,
  email: 'payments@nordic-coffee.example',
  timezone: 'Europe/Copenhagen',
  invoiceEmail: null,
  invoiceAttention: null,
  vat: null,
  currencyCode: 'EUR',
  status: 'PENDING',
  capabilities: { moto: false, syncPayout: false },
  createdAt: '2026-11-24T09:10:12.165Z',
};
const ACTIVE_ACCOUNT_EXAMPLE = { ...ACCOUNT_EXAMPLE, status: 'ACTIVE' };

export const AccountResponse = Type.Object({ account: AccountRecord }, { examples: [{ account: ACCOUNT_EXAMPLE }] });
/** Activate answers the account in status ACTIVE. */
export const ActivatedAccountResponse = Type.Object(AccountResponse.properties, { examples: [{ account: ACTIVE_ACCOUNT_EXAMPLE }] });
/** The capabilities route answers the account with the capabilities it now has. */
export const CapabilitiesResponse = Type.Object(AccountResponse.properties, {
  examples: [{ account: { ...ACTIVE_ACCOUNT_EXAMPLE, capabilities: { moto: true, syncPayout: false } } }],
});
export const AccountList = PageEnvelope(AccountResponse, { examples: [pageExample('/partner/accounts', [{ account: ACTIVE_ACCOUNT_EXAMPLE }])] });

export const CreateAccountBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 256 }),
    email: Type.String({ format: 'email', maxLength: 256 }),
    currencyCode: Currency,
    timezone: Type.String({ minLength: 1, maxLength: 64 }),
    domain: Type.String({ minLength: 1, maxLength: 253, pattern: '^[A-Za-z0-9.-]+$' }),
    language: Type.Optional(Type.String({ minLength: 2, maxLength: 16 })),
  },
  {
    examples: [
      {
        name: 'Nordic Coffee ApS',
        email: 'payments@nordic-coffee.example',
        currencyCode: 'EUR',
        timezone: 'Europe/Copenhagen',
        domain: 'shop.example.com',
        language: 'da',
      },
    ],
  },
);

export const AccountParams = Type.Object({ accountId: Uuid });
export const AccessTokenBody = Type.Object({ environment: StringEnum(['test', 'live'] as const) }, { examples: [{ environment: 'test' }] });
export const AccessTokenResponse = Type.Object(
  { accessToken: Type.String(), expiresAt: DateTime },
  { examples: [{ accessToken: 'pat_vmTzZGdzcIL0TH7mqF5qfE4mCSHhHuEvQFhREKJqvo4', expiresAt: '2026-11-24T17:10:12.213Z' }] },
);
export const CapabilitiesBody = Type.Object(
  { moto: Type.Optional(Type.Boolean()), syncPayout: Type.Optional(Type.Boolean()) },
  { examples: [{ moto: true }, { moto: true, syncPayout: true }] },
);
export const ApiKeyBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: 256 }) }, { examples: [{ name: 'Order service' }] });
export const ApiKeyResponse = Type.Object(
  { name: Type.String(), key: Type.String({ description: 'Shown once; only a hash is kept.' }) },
  { examples: [{ name: 'Order service', key: 'sk_4ywUVyRszpzA2CpB93jJNXgT-fyRha4TbV-h9_07PmA' }] },
);
