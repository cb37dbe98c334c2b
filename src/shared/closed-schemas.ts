/**
 * Request bodies are closed: a field the contract does not define is refused with 422 naming it,
 * instead of being dropped while the request goes on (a `"currancy"` typo used to charge in the
 * subscription's currency). Every object of a body schema that names its properties and says
 * nothing about others gets `additionalProperties: false`; maps (`attributes`: patternProperties or
 * additionalProperties of their own) stay open. Fields that production defines and this service
 * ignores are named in the schemas (e.g. `processor`), so they stay accepted.
 *
 * A copy: the module's schema objects are shared with responses and examples. One copy per schema
 * object, made once per process: every app built from the same routes (tests build hundreds) then
 * hands Ajv the same object, which Ajv compiled already.
 */
type Json = Record<string, unknown>;

const closedCopies = new WeakMap<object, unknown>();

export function closedSchema<T>(schema: T): T {
  if (schema === null || typeof schema !== 'object') return schema;
  if (!closedCopies.has(schema)) closedCopies.set(schema, closedCopy(schema));
  return closedCopies.get(schema) as T;
}

function closedCopy<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map(closedCopy) as T;
  if (schema === null || typeof schema !== 'object') return schema;
  const copy: Json = {};
  for (const [key, value] of Object.entries(schema as Json)) copy[key] = key === 'examples' || key === 'default' ? value : closedCopy(value);
  // TypeBox's kind symbols are not enumerable; they are not needed by the validator or the document.
  if (copy.properties && copy.additionalProperties === undefined && copy.patternProperties === undefined) copy.additionalProperties = false;
  return copy as T;
}
