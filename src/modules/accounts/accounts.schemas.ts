import { Type } from '@sinclair/typebox';
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
export const AccountResponse = Type.Object({ account: AccountRecord });

export const CreateAccountBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 256 }),
  email: Type.String({ format: 'email', maxLength: 256 }),
  currencyCode: Currency,
  timezone: Type.String({ minLength: 1, maxLength: 64 }),
  domain: Type.String({ minLength: 1, maxLength: 253, pattern: '^[A-Za-z0-9.-]+$' }),
  language: Type.Optional(Type.String({ minLength: 2, maxLength: 16 })),
});

export const AccountParams = Type.Object({ accountId: Uuid });
export const AccessTokenBody = Type.Object({ environment: StringEnum(['test', 'live'] as const) });
export const AccessTokenResponse = Type.Object({ accessToken: Type.String(), expiresAt: DateTime });
export const CapabilitiesBody = Type.Object({ moto: Type.Optional(Type.Boolean()), syncPayout: Type.Optional(Type.Boolean()) });
export const ApiKeyBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: 256 }) });
export const ApiKeyResponse = Type.Object({ name: Type.String(), key: Type.String({ description: 'Shown once; only a hash is kept.' }) });
