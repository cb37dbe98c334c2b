/**
 * A unique violation of a primary key, in either store's spelling, as the DuplicateId the modules
 * understand (they know no driver): SQLite's `SQLITE_CONSTRAINT_PRIMARYKEY` "UNIQUE constraint
 * failed: <table>.id", PostgreSQL's 23505 on `<table>_pkey`.
 */
import { DuplicateId } from '../shared/errors.js';

const SQLITE_PRIMARY_KEY = /^UNIQUE constraint failed: ([a-z_]+)\.id$/;

export function duplicateIdOf(err: unknown): DuplicateId | null {
  if (typeof err !== 'object' || err === null) return null;
  const { code, message, constraint, table } = err as { code?: unknown; message?: unknown; constraint?: unknown; table?: unknown };
  if (code === 'SQLITE_CONSTRAINT_PRIMARYKEY' && typeof message === 'string') {
    const match = SQLITE_PRIMARY_KEY.exec(message);
    return match ? new DuplicateId(match[1]!) : null;
  }
  if (code === '23505' && typeof table === 'string' && constraint === `${table}_pkey`) return new DuplicateId(table);
  return null;
}
