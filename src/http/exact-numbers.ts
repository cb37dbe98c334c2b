/**
 * Exact numbers only (INTERFACE §3): a JSON body is validated without any type coercion, and a
 * number in a query string or path is read from its decimal digits alone. Ajv's coercion would
 * otherwise turn `"Infinity"`, `"0x10"`, `"1e3"`, `" 5"`, `true` or `[12]` into numbers.
 */
import type { TSchema } from '@sinclair/typebox';
import { AppError, type FieldErrors } from '../shared/errors.js';

type ValidatorFactory = (externalSchemas: unknown, options: { customOptions?: Record<string, unknown> }) => (route: { httpPart?: string }) => unknown;

/**
 * Wraps Fastify's validator factory: bodies compile on an Ajv without coercion; query strings,
 * path parameters and headers (always text on the wire) keep `coerceTypes: 'array'`, guarded by
 * `decimalOnly` below.
 */
export function bodyWithoutCoercion(factory: ValidatorFactory): ValidatorFactory {
  return (externalSchemas, options) => {
    const coercing = factory(externalSchemas, options);
    const exact = factory(externalSchemas, { ...options, customOptions: { ...options.customOptions, coerceTypes: false } });
    return (route) => (route.httpPart === 'body' ? exact(route) : coercing(route));
  };
}

const DECIMAL = /^-?\d+$/;

function isNumeric(schema: TSchema | undefined): boolean {
  if (!schema) return false;
  if (schema.type === 'integer' || schema.type === 'number') return true;
  if (Array.isArray(schema.type)) return schema.type.includes('integer') || schema.type.includes('number');
  const members = (schema.anyOf ?? schema.oneOf) as TSchema[] | undefined;
  return Array.isArray(members) && members.some(isNumeric);
}

/** The numeric property names of a query-string or params schema (read once, at route registration). */
export function numericFields(schema: TSchema | undefined): string[] {
  const properties = schema?.properties as Record<string, TSchema> | undefined;
  if (!properties) return [];
  return Object.entries(properties)
    .filter(([, property]) => isNumeric(property) || (property.type === 'array' && isNumeric(property.items as TSchema)))
    .map(([name]) => name);
}

/** Refuses any numeric field whose raw text is not plain decimal digits (with an optional minus). */
export function requireDecimalDigits(values: unknown, fields: readonly string[]): void {
  if (fields.length === 0 || values === null || typeof values !== 'object') return;
  const errors: FieldErrors = {};
  for (const field of fields) {
    const raw = (values as Record<string, unknown>)[field];
    if (raw === undefined) continue;
    const texts = Array.isArray(raw) ? raw : [raw];
    if (texts.some((text) => typeof text !== 'string' || !DECIMAL.test(text))) errors[field] = ['[int]: must be an integer written in decimal digits'];
  }
  const fieldNames = Object.keys(errors);
  if (fieldNames.length) throw new AppError('VALIDATION_ERROR', `The request is invalid: ${fieldNames.join(', ')}.`, errors);
}
