/**
 * What the statements a counter logged touched (StatementCounter.logged): tests of a path's cost say
 * which data its statements read and wrote, by table, never by the statements' text.
 */
import type { LoggedStatement, StatementCounter, StatementKind } from '../../src/storage/statement-counter.js';

export interface Touching {
  /** The statement's kind (a read: `read`, whatever it joins; a write: `write`, whatever it reads besides). */
  kind?: StatementKind;
  /** Tables it reads, every one of them. */
  reads?: readonly string[];
  /** Tables it writes, every one of them. */
  writes?: readonly string[];
  /** Tables it reads, and no other. */
  readsOnly?: readonly string[];
}

/** Whether `statement` is one `touching` describes (a statement without a Kysely tree touches nothing known). */
export function touches(statement: LoggedStatement, touching: Touching): boolean {
  if (touching.kind && statement.kind !== touching.kind) return false;
  const tables = statement.tables;
  if (!tables) return !touching.reads && !touching.writes && !touching.readsOnly;
  if (touching.reads?.some((table) => !tables.reads.has(table))) return false;
  if (touching.writes?.some((table) => !tables.writes.has(table))) return false;
  if (touching.readsOnly && (touching.readsOnly.length !== tables.reads.size || touching.readsOnly.some((table) => !tables.reads.has(table)))) return false;
  return true;
}

/** The statements of `counter`'s log that `touching` describes. */
export function statementsTouching(counter: StatementCounter, touching: Touching): LoggedStatement[] {
  return counter.logged().filter((statement) => touches(statement, touching));
}

/** `counter`'s log as a person reads it in a failure: kind, tables, then the text cut short. */
export function describeLog(counter: StatementCounter): string {
  return counter
    .logged()
    .map((s) => {
      const tables = s.tables ? `reads [${[...s.tables.reads].join(', ')}] writes [${[...s.tables.writes].join(', ')}]` : 'no tree';
      return `- ${s.kind} ${tables}: ${s.sql.replace(/\s+/g, ' ').slice(0, 120)}`;
    })
    .join('\n');
}
