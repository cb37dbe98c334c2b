/**
 * Reads never die of one row (issue 9): a record that cannot be serialized (a value no constraint
 * should have let in) is logged with its id and fails only itself. A list leaves it out and answers
 * with the others; a single record answers 500.
 */

type Serialize = (payload: unknown) => string;

/** The id of a record or of a wrapped record (`{transaction: {id}}`, `{webhook: {id}}`). */
export function recordId(value: unknown): string | null {
  if (value === null || typeof value !== 'object') return null;
  const record = value as Record<string, unknown>;
  if (typeof record.id === 'string') return record.id;
  for (const inner of Object.values(record)) {
    if (inner !== null && typeof inner === 'object' && typeof (inner as Record<string, unknown>).id === 'string') return (inner as { id: string }).id;
  }
  return null;
}

export interface UnserializableRecord {
  id: string | null;
  error: unknown;
}

/**
 * Serializes `payload`; on failure, a list envelope (`items`) is serialized again without the items
 * that fail on their own, each reported to `onDropped`. Anything else rethrows, with the record's id.
 */
export function serializeRecords(payload: unknown, serialize: Serialize, onDropped: (dropped: UnserializableRecord[]) => void): string {
  try {
    return serialize(payload);
  } catch (error) {
    const envelope = payload as { items?: unknown } | null;
    if (!envelope || !Array.isArray(envelope.items)) {
      throw Object.assign(new Error(`record ${recordId(payload) ?? '(no id)'} cannot be serialized: ${(error as Error).message}`), { cause: error });
    }
    const dropped: UnserializableRecord[] = [];
    const kept = envelope.items.filter((item) => {
      try {
        serialize({ ...envelope, items: [item] });
        return true;
      } catch (itemError) {
        dropped.push({ id: recordId(item), error: itemError });
        return false;
      }
    });
    if (dropped.length === 0) throw error;
    onDropped(dropped);
    return serialize({ ...envelope, items: kept });
  }
}
