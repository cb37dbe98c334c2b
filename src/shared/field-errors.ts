/**
 * Ajv (schema) errors → the `errors` map of a 422: dot paths and "[rule]: text" messages
 * (INTERFACE §3). One entry per failing keyword; anyOf/union noise is folded into one message.
 * Shared, not HTTP: the error handler maps request validation with it, and the MIT batch maps
 * each entry's validation (modules/mit/entry-validation.ts) the same way.
 */
import type { FieldErrors, FieldRule } from './errors.js';

export interface SchemaError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
  /** The schema the failing keyword belongs to (Ajv's `verbose`): what the field should have been. */
  parentSchema?: Record<string, unknown>;
  /** The value that failed (Ajv's `verbose`); only its kind is ever said, never the value. */
  data?: unknown;
}

/** What an amount is, said wherever an amount is refused. */
export const MINOR_UNITS_TEXT = 'an integer in minor units, e.g. 1000 = 10.00 DKK';

/** A schema that describes its value as money (Amount, PositiveAmount and their kin in src/shared/wire.ts). */
const isMoney = (schema: Record<string, unknown> | undefined) => typeof schema?.description === 'string' && /minor units/i.test(schema.description);

const TYPE_TEXT: Record<string, string> = {
  integer: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'true or false',
  array: 'an array',
  object: 'an object',
};

/** "a string" / "an integer in minor units, …" and what came instead. */
function typeText(type: string, error: SchemaError, data: unknown): string {
  const expected = type === 'integer' && isMoney(error.parentSchema) ? MINOR_UNITS_TEXT : (TYPE_TEXT[type] ?? `of type ${type}`);
  return `must be ${expected}${data === undefined ? '' : `, not ${describeValue(data)}`}`;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a fraction';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

/** The closest of `names` to `name` (a typo: at most 2 edits), if any. */
function closest(name: string, names: string[]): string | null {
  let best: string | null = null;
  let bestDistance = 3;
  for (const candidate of names) {
    const d = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best;
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length]!;
}

/** JSON types → contract rules; an object is an `array` in the contract's (associative) sense. */
const TYPE_RULES: Record<string, FieldRule> = {
  integer: 'int',
  number: 'int',
  string: 'string',
  boolean: 'boolean',
  array: 'array',
  object: 'array',
};

const FORMAT_RULES: Record<string, [FieldRule, string]> = {
  uuid: ['uuid', 'must be a valid UUID'],
  date: ['date', 'must be a date (YYYY-MM-DD)'],
  'date-time': ['date', 'must be an RFC 3339 date-time'],
  uri: ['url', 'must be a valid URL'],
  email: ['regex', 'must be a valid e-mail address'],
  iso4217: ['regex', 'must be an ISO 4217 currency code the service supports'],
};

function fieldPath(error: SchemaError, root: string): string {
  const parts = error.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (error.keyword === 'required') parts.push(String(error.params.missingProperty));
  if (error.keyword === 'additionalProperties') parts.push(String(error.params.additionalProperty));
  return parts.length ? parts.join('.') : root;
}

function rule(error: SchemaError): [FieldRule, string] | null {
  const p = error.params;
  switch (error.keyword) {
    case 'required':
      return ['required', 'the field is required'];
    case 'type': {
      const type = String(p.type).split(',')[0]!;
      // The null member of a nullable union says nothing the other member does not.
      if (type === 'null') return null;
      return [TYPE_RULES[type] ?? 'string', typeText(type, error, error.data)];
    }
    case 'minimum':
    case 'exclusiveMinimum':
      return [`min:${Number(p.limit)}`, `must be at least ${String(p.limit)}${isMoney(error.parentSchema) ? ' (minor units)' : ''}`];
    case 'maximum':
    case 'exclusiveMaximum':
      return [`max:${Number(p.limit)}`, `must be at most ${String(p.limit)}${isMoney(error.parentSchema) ? ' (minor units)' : ''}`];
    case 'minLength':
      return [`min:${Number(p.limit)}`, `must be at least ${String(p.limit)} characters`];
    case 'maxLength':
      return [`max:${Number(p.limit)}`, `must be at most ${String(p.limit)} characters`];
    case 'minItems':
      return [`min:${Number(p.limit)}`, `must have at least ${String(p.limit)} items`];
    case 'maxItems':
      return [`max:${Number(p.limit)}`, `must have at most ${String(p.limit)} items`];
    case 'minProperties':
      return [`min:${Number(p.limit)}`, `must have at least ${String(p.limit)} entries`];
    case 'maxProperties':
      return [`max:${Number(p.limit)}`, `must have at most ${String(p.limit)} entries`];
    case 'pattern':
      return ['regex', `must match ${String(p.pattern)}`];
    case 'format':
      return FORMAT_RULES[String(p.format)] ?? ['regex', `must be a valid ${String(p.format)}`];
    case 'enum': {
      const allowed = (p.allowedValues as unknown[]).map(String).join(',');
      return [`in:${allowed}`, `must be one of ${allowed}`];
    }
    case 'const':
      return [`in:${String(p.allowedValue)}`, `must be ${String(p.allowedValue)}`];
    case 'additionalProperties': {
      // An unknown field: the rule lists the fields this object takes; a near name is offered.
      const names = Object.keys((error.parentSchema?.properties as Record<string, unknown> | undefined) ?? {});
      const near = closest(String(p.additionalProperty), names);
      const parent = fieldPath({ ...error, keyword: 'parent' }, '');
      return [`in:${names.join(',')}`, `is not a field of ${parent ? parent : 'this request'}${near ? `; did you mean ${near}?` : ''}`];
    }
    case 'anyOf':
    case 'oneOf':
      return null;
    default:
      return ['regex', error.message ?? 'is invalid'];
  }
}

/**
 * Union members ("anyOf") report one error per member; keep the most telling: a non-type error if
 * any member got that far (e.g. [min:1] for a nullable integer), else the first type error.
 */
export function toFieldErrors(errors: SchemaError[], root = 'body'): FieldErrors {
  const byField = new Map<string, Array<[FieldRule, string]>>();
  for (const error of errors) {
    const r = rule(error);
    if (!r) continue;
    const field = fieldPath(error, root);
    const list = byField.get(field) ?? [];
    if (!list.some(([existing]) => existing === r[0])) list.push(r);
    byField.set(field, list);
  }
  const result: FieldErrors = {};
  for (const [field, rules] of byField) {
    const specific = rules.filter(([name]) => !Object.values(TYPE_RULES).includes(name));
    const chosen = specific.length ? specific : rules.slice(0, 1);
    result[field] = chosen.map(([name, text]) => `[${name}]: ${text}`);
  }
  // An error on a whole object alongside errors on its fields adds nothing.
  return result;
}

/** The 422's message: each field with what it should be, e.g. "amount must be an integer in minor units, …". */
export function validationMessage(errors: FieldErrors): string {
  const parts = Object.entries(errors).map(([field, rules]) => `${field} ${rules.map((r) => r.replace(/^\[[^\]]*\]: /, '')).join(' and ')}`);
  return parts.length ? `The request is invalid: ${parts.join('; ')}.` : 'The request is invalid.';
}
