/** Shared TypeBox building blocks for wire schemas. */
import { type TSchema, Type } from '@sinclair/typebox';
import { TRANSACTION_ID_PATTERN } from './ids.js';
import { MAX_AMOUNT } from './money.js';

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
export const Uuid = Type.String({ format: 'uuid' });
export const DateTime = Type.String({ format: 'date-time' });
export const DateOnly = Type.String({ format: 'date' });
/** Checked against the service's ISO 4217 table by the `iso4217` format (registered in src/http/app.ts). */
export const Currency = Type.String({ pattern: '^[A-Z]{3}$', format: 'iso4217', description: 'ISO 4217 code, upper case.' });
export const Amount = Type.Integer({ minimum: 0, maximum: MAX_AMOUNT, description: 'Minor units.' });
export const PositiveAmount = Type.Integer({ minimum: 1, maximum: MAX_AMOUNT, description: 'Minor units, at least 1.' });
export const TransactionId = Type.String({ pattern: TRANSACTION_ID_PATTERN, description: '11 characters of Crockford base32.' });
export const Url = Type.String({ format: 'uri', maxLength: 2048 });
/** A value sent on as an HTTP header: printable ASCII only (CR/LF or other control characters would break the request). */
export const HeaderValue = (description: string) => Type.String({ minLength: 1, maxLength: 1024, pattern: '^[\\x20-\\x7E]+$', description });
export const Attributes = Type.Record(Type.String(), Type.String(), { description: 'Free-form key/value map.', maxProperties: 50 });
export const StringEnum = <T extends readonly string[]>(values: T, options: { description?: string } = {}) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
/**
 * One of `values` or null, as one schema with a type list (not a union): the response serializer
 * then writes any string it is given instead of failing on one the list does not name, while the
 * OpenAPI document publishes the enumeration.
 */
export const NullableStringEnum = <T extends readonly string[]>(values: T, options: { description?: string } = {}) =>
  Type.Unsafe<T[number] | null>({ type: ['string', 'null'], enum: [...values, null], ...options });

export const ErrorResponse = Type.Object({
  success: Type.Literal(false),
  errorCode: Type.String(),
  message: Type.String(),
});
/**
 * Every 422 a route may answer: VALIDATION_ERROR with its field errors, or IDEMPOTENCY_KEY_REUSED
 * (no `errors`). A response schema that required `errors` made the latter fail to serialize (500).
 */
export const ValidationErrorResponse = Type.Object({
  success: Type.Literal(false),
  errorCode: StringEnum(['VALIDATION_ERROR', 'IDEMPOTENCY_KEY_REUSED'] as const),
  message: Type.String(),
  errors: Type.Optional(Type.Record(Type.String(), Type.Array(Type.String()))),
});
