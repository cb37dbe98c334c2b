/**
 * Validates one entry of a batch against its TypeBox schema, the way the HTTP layer validates a
 * whole body, so that a batch entry's 422 reads exactly like the single request's. Emits
 * Ajv-shaped errors for toFieldErrors. Supports the keywords our request schemas use (type,
 * required, properties, patternProperties, additionalProperties: false, min/max, length, pattern,
 * format, enum, anyOf, items).
 */
import type { TSchema } from '@sinclair/typebox';
import { type SchemaError, toFieldErrors } from '../../shared/field-errors.js';
import type { FieldErrors } from '../../shared/errors.js';

type Schema = TSchema & Record<string, any>;

const FORMATS: Record<string, (v: string) => boolean> = {
  uuid: (v) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v),
  uri: (v) => {
    try {
      return /^[a-z][a-z0-9+.-]*:/i.test(v) && Boolean(new URL(v));
    } catch {
      return false;
    }
  },
  date: (v) => /^\d{4}-\d{2}-\d{2}$/.test(v) && !Number.isNaN(Date.parse(`${v}T00:00:00Z`)),
  'date-time': (v) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(v) && !Number.isNaN(Date.parse(v)),
};

function typeOk(type: string, value: unknown): boolean {
  switch (type) {
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    default:
      return true;
  }
}

const escape = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** Compiled once per pattern: a batch checks the same few patterns 500 times. */
const patterns = new Map<string, RegExp>();
function patternOf(source: string): RegExp {
  let regex = patterns.get(source);
  if (!regex) patterns.set(source, (regex = new RegExp(source, 'u')));
  return regex;
}

/** Length in code points, as JSON Schema counts (UTF-16 length is an upper bound: spread only when it matters). */
function codePoints(value: string, schema: Schema): number {
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : Infinity;
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
  return value.length <= max && value.length / 2 >= min ? value.length : [...value].length;
}

/** Records one failed keyword (a function of its own: no closure made per check — a batch checks 500 entries). */
function fail(out: SchemaError[], path: string, keyword: string, params: Record<string, unknown>, schema: Schema, data: unknown): void {
  out.push({ keyword, instancePath: path, params, parentSchema: schema, data });
}

function check(schema: Schema, value: unknown, path: string, out: SchemaError[]): void {
  if (Array.isArray(schema.anyOf)) {
    const branches: SchemaError[][] = [];
    for (const branch of schema.anyOf as Schema[]) {
      const errors: SchemaError[] = [];
      check(branch, value, path, errors);
      branches.push(errors);
    }
    if (branches.some((errors) => errors.length === 0)) return;
    for (const errors of branches) out.push(...errors);
    fail(out, path, 'anyOf', {}, schema, value);
    return;
  }
  if (typeof schema.type === 'string' && !typeOk(schema.type, value)) {
    fail(out, path, 'type', { type: schema.type }, schema, value);
    return;
  }
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) fail(out, path, 'enum', { allowedValues: schema.enum }, schema, value);
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum) fail(out, path, 'minimum', { limit: schema.minimum }, schema, value);
    if (typeof schema.maximum === 'number' && value > schema.maximum) fail(out, path, 'maximum', { limit: schema.maximum }, schema, value);
  }
  if (typeof value === 'string') {
    const length = codePoints(value, schema);
    if (typeof schema.minLength === 'number' && length < schema.minLength) fail(out, path, 'minLength', { limit: schema.minLength }, schema, value);
    if (typeof schema.maxLength === 'number' && length > schema.maxLength) fail(out, path, 'maxLength', { limit: schema.maxLength }, schema, value);
    if (typeof schema.pattern === 'string' && !patternOf(schema.pattern).test(value)) fail(out, path, 'pattern', { pattern: schema.pattern }, schema, value);
    const format = typeof schema.format === 'string' ? FORMATS[schema.format] : undefined;
    if (format && !format(value)) fail(out, path, 'format', { format: schema.format }, schema, value);
  }
  if (Array.isArray(value)) {
    if (typeof schema.minItems === 'number' && value.length < schema.minItems) fail(out, path, 'minItems', { limit: schema.minItems }, schema, value);
    if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) fail(out, path, 'maxItems', { limit: schema.maxItems }, schema, value);
    if (schema.items) for (let i = 0; i < value.length; i++) check(schema.items as Schema, value[i], `${path}/${i}`, out);
  }
  if (typeOk('object', value) && (schema.properties || schema.patternProperties)) {
    const object = value as Record<string, unknown>;
    for (const key of (schema.required as string[] | undefined) ?? []) {
      if (object[key] === undefined) fail(out, path, 'required', { missingProperty: key }, schema, value);
    }
    const keys = Object.keys(object);
    if (typeof schema.maxProperties === 'number' && keys.length > schema.maxProperties)
      fail(out, path, 'maxProperties', { limit: schema.maxProperties }, schema, value);
    for (const key of keys) {
      const property = (schema.properties as Record<string, Schema> | undefined)?.[key];
      if (property) {
        if (object[key] !== undefined) check(property, object[key], `${path}/${escape(key)}`, out);
        continue;
      }
      let matched = false;
      for (const [pattern, sub] of Object.entries((schema.patternProperties as Record<string, Schema> | undefined) ?? {})) {
        if (!patternOf(pattern).test(key)) continue;
        matched = true;
        check(sub, object[key], `${path}/${escape(key)}`, out);
      }
      if (!matched && schema.additionalProperties === false) fail(out, path, 'additionalProperties', { additionalProperty: key }, schema, object);
    }
  }
}

/** Field errors of `value` against `schema` (paths relative to the entry); empty when valid. */
export function validateEntry(schema: TSchema, value: unknown): FieldErrors {
  const errors: SchemaError[] = [];
  check(schema as Schema, value, '', errors);
  return errors.length ? toFieldErrors(errors, 'entry') : {};
}
