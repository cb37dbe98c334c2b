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
      const name = TYPE_RULES[type] ?? 'string';
      return [name, name === 'int' ? 'must be an integer' : `must be of type ${type}`];
    }
    case 'minimum':
    case 'exclusiveMinimum':
      return [`min:${Number(p.limit)}`, `must be at least ${String(p.limit)}`];
    case 'maximum':
    case 'exclusiveMaximum':
      return [`max:${Number(p.limit)}`, `must be at most ${String(p.limit)}`];
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
    case 'additionalProperties':
      return null;
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
