/** A copy of a JSON schema whose objects accept no property they do not name: a misspelt example field fails. */
export function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed);
  if (schema === null || typeof schema !== 'object') return schema;
  const copy: Record<string, any> = {};
  for (const [key, value] of Object.entries(schema)) copy[key] = key === 'examples' ? value : closed(value);
  if (copy.properties && copy.additionalProperties === undefined && copy.patternProperties === undefined) copy.additionalProperties = false;
  return copy;
}
