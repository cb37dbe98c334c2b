/**
 * The conditional update of one transaction, as fixed-shape statements. An update is typed
 * (TransactionUpdate): the columns it sets, the amounts it adds, the states it applies in. Its
 * shape — which columns, which amounts, how many states — picks a statement built and compiled
 * once (query-template.ts); the values are bound in the order the shape lists them. A statement
 * ends one of four ways (UpdateEnding): the row it left, or — when the row was predicted from the
 * caller's read — a check of that prediction, in-process (SQLite) or held in the commit
 * (PostgreSQL, where it may also finish the operation in the same statement).
 *
 * The update checks the reservation model's invariants itself: captures and voids, settled and in
 * flight, never exceed the authorization; refunds, settled and in flight, never exceed what was
 * captured. An update whose amounts do not fit changes nothing.
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Transaction, TransactionState } from '../../modules/transactions/transaction.js';
import type { AggregateDelta, OperationResultPatch, TransactionResultPatch } from '../../modules/transactions/transactions.repository.js';
import type { Database } from '../schema.js';
import { type Params, queryTemplate, type QueryTemplate, type TemplateQuery } from '../query-template.js';
import { joinable } from '../postgres/write-combining.js';
import { STALE_WRITE } from '../stale-write.js';

export interface TransactionUpdate {
  readonly id: string;
  /** The states the update applies in. */
  readonly from: readonly TransactionState[];
  readonly patch: TransactionResultPatch;
  readonly delta: AggregateDelta;
}

/** What the update of a prediction expects the row to be afterwards: its state and shown amounts. */
export type Expected = Pick<Transaction, 'state' | ShownAmount>;

/** An operation's answer, written in the same statement as its transaction's update (PostgreSQL). */
export interface OperationFinish {
  readonly id: string;
  readonly patch: OperationResultPatch;
}

/** Every column a patch may set, in the order the statements set them. */
const PATCH_COLUMNS = [
  'state',
  'errorCode',
  'externalStatusCodes',
  'acquirer',
  'acquirerReference',
  'sca',
  'finalizedAt',
  'paymentMethodId',
  'paymentMethodType',
  'paymentMethodSubType',
  'paymentMethodExpiry',
  'paymentMethodDisplayText',
  'paymentMethodHolderName',
  'subscriptionId',
  'updatedAt',
] as const satisfies ReadonlyArray<keyof TransactionResultPatch>;
type PatchColumn = (typeof PATCH_COLUMNS)[number];
/** Compiles only while PATCH_COLUMNS lists every column of TransactionResultPatch. */
const EVERY_PATCH_COLUMN: Exclude<keyof TransactionResultPatch, PatchColumn> extends never ? true : never = true;

/** Patch columns stored as JSON text. */
const JSON_COLUMNS: ReadonlySet<PatchColumn> = new Set(['externalStatusCodes', 'sca']);

/** Each amount of a delta and the column it adds to. */
const AMOUNT_COLUMNS = {
  authorized: 'authorizedAmount',
  captured: 'capturedAmount',
  voided: 'voidedAmount',
  paidOut: 'paidOutAmount',
  refunded: 'refundedAmount',
  pending: 'pendingAmount',
  pendingRefund: 'pendingRefundAmount',
} as const satisfies Record<keyof AggregateDelta, string>;
type Amount = keyof typeof AMOUNT_COLUMNS;
const AMOUNTS = Object.keys(AMOUNT_COLUMNS) as Amount[];

/** The amounts a Transaction shows (pending refunds are the store's own), which a prediction checks, with their SQL names. */
const SHOWN_AMOUNTS = ['authorizedAmount', 'capturedAmount', 'voidedAmount', 'paidOutAmount', 'refundedAmount', 'pendingAmount'] as const;
type ShownAmount = (typeof SHOWN_AMOUNTS)[number];
const SHOWN_SQL = SHOWN_AMOUNTS.map((field) => field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`));

/** The most states an update applies in (its shape's 3 bits). */
const MAX_STATES = 7;

interface Shape {
  readonly columns: readonly PatchColumn[];
  readonly amounts: readonly Amount[];
  readonly states: number;
  /** Captures, voids or reservations for them change: the authorization bounds them. */
  readonly capturesChecked: boolean;
  /** Refunds or reservations for them change: the captured amount bounds them. */
  readonly refundsChecked: boolean;
}

/** The shape of `update` as a number: a bit per column set and per amount added, then the count of states. */
function shapeKey(update: TransactionUpdate): number {
  let key = 0;
  let bit = 1;
  const { patch, delta } = update;
  for (const column of PATCH_COLUMNS) {
    if (patch[column] !== undefined) key |= bit;
    bit <<= 1;
  }
  for (const amount of AMOUNTS) {
    if (delta[amount]) key |= bit;
    bit <<= 1;
  }
  if (update.from.length > MAX_STATES) throw new Error(`a transaction update applies in at most ${MAX_STATES} states`);
  return key + bit * update.from.length;
}

function shapeOf(update: TransactionUpdate): Shape {
  const { patch, delta } = update;
  const amounts = AMOUNTS.filter((amount) => delta[amount]);
  return {
    columns: PATCH_COLUMNS.filter((column) => patch[column] !== undefined),
    amounts,
    states: update.from.length,
    capturesChecked: amounts.some((amount) => amount === 'captured' || amount === 'voided' || amount === 'pending'),
    refundsChecked: amounts.some((amount) => amount === 'refunded' || amount === 'pendingRefund'),
  };
}

/**
 * The values of `update` in its shape's order: id, columns, amounts, states, the checks' amounts;
 * then the expected row's state and amounts, then the operation's answer, when given.
 */
function valuesOf(shape: Shape, update: TransactionUpdate, expected?: Expected, finish?: OperationFinish): unknown[] {
  const { patch, delta } = update;
  const values: unknown[] = [update.id];
  for (const column of shape.columns) values.push(JSON_COLUMNS.has(column) ? jsonText(patch[column]) : patch[column]);
  for (const amount of shape.amounts) values.push(delta[amount]);
  values.push(...update.from);
  if (shape.capturesChecked) values.push((delta.captured ?? 0) + (delta.voided ?? 0) + (delta.pending ?? 0), delta.authorized ?? 0);
  if (shape.refundsChecked) values.push((delta.refunded ?? 0) + (delta.pendingRefund ?? 0), delta.captured ?? 0);
  if (expected) values.push(expected.state, ...SHOWN_AMOUNTS.map((field) => expected[field]));
  if (finish) values.push(...finishValues(finish));
  return values;
}

/** An operation's answer in buildFinishOperation's order: id, then the answer's columns. */
function finishValues({ id, patch }: OperationFinish): unknown[] {
  return [id, patch.state, patch.errorCode, jsonText(patch.externalStatusCodes), patch.acquirerReference, patch.finalizedAt];
}

/** A JSON column's text; null stays SQL NULL (not the text 'null'). */
const jsonText = (value: unknown): string | null => (value === null || value === undefined ? null : JSON.stringify(value));

/** Placeholders taken in order, as valuesOf lists the values. */
function placeholders(p: Params<Record<string, unknown>>): () => unknown {
  let i = 0;
  return () => p[String(i++)];
}

/** The update statement of `shape`, its placeholders taken from `next` in valuesOf's order. */
function buildUpdate(db: Kysely<Database>, shape: Shape, next: () => unknown) {
  const id = next();
  const set: Record<string, unknown> = {};
  for (const column of shape.columns) set[column] = next();
  const adds = shape.amounts.map((amount) => [AMOUNT_COLUMNS[amount], next()] as const);
  const states = Array.from({ length: shape.states }, next);
  let q = db
    .updateTable('transactions')
    .set((eb) => {
      for (const [column, amount] of adds) set[column] = eb(column, '+', amount as number);
      return set as never;
    })
    .where('id', '=', id as string)
    .where('state', 'in', states as TransactionState[]);
  if (shape.capturesChecked) {
    const [uncaptured, authorized] = [next(), next()];
    q = q.where(
      sql<boolean>`${sql.ref('captured_amount')} + ${sql.ref('voided_amount')} + ${sql.ref('pending_amount')} + ${uncaptured} <= ${sql.ref('authorized_amount')} + ${authorized}`,
    );
  }
  if (shape.refundsChecked) {
    const [refunds, captured] = [next(), next()];
    q = q.where(sql<boolean>`${sql.ref('refunded_amount')} + ${sql.ref('pending_refund_amount')} + ${refunds} <= ${sql.ref('captured_amount')} + ${captured}`);
  }
  return q;
}

/** Whether a row has the expected state and amounts (placeholders from `next`). */
function matchesExpected(next: () => unknown): RawBuilder<boolean> {
  const state = next();
  return sql<boolean>`${sql.join([sql`"state" = ${state}`, ...SHOWN_SQL.map((column) => sql`${sql.ref(column)} = ${next()}`)], sql` and `)}`;
}

/** A predicted statement's one column: it refuses the statement unless `condition` holds (stale-write.ts). */
function refusedUnless(condition: RawBuilder<unknown>) {
  return sql<number>`cast(case when ${condition} then '0' else cast(${STALE_WRITE} as text) end as integer)`.as('applied');
}

/** Finishes an operation still PROCESSING (placeholders from `next`: id, then the answer's columns). */
function buildFinishOperation(db: Kysely<Database>, next: () => unknown) {
  const id = next();
  const set = { state: next(), errorCode: next(), externalStatusCodes: next(), acquirerReference: next(), finalizedAt: next() };
  // 'PROCESSING' a literal: operations_settleable's condition names the state.
  return db
    .updateTable('operations')
    .set(set as never)
    .where('id', '=', id as string)
    .where('state', '=', sql.lit('PROCESSING'));
}

const finishOperationStatement = queryTemplate((db: Kysely<Database>, p: Params<Values>) => buildFinishOperation(db, placeholders(p)));

/** Finishes an operation still PROCESSING; true when this call did it. */
export async function finishOperation(db: Kysely<Database>, finish: OperationFinish): Promise<boolean> {
  const [result] = await finishOperationStatement.execute(db, finishValues(finish) as unknown as Values);
  return Number(result?.numUpdatedRows) === 1;
}

/** How an update's statement ends: what it answers. */
const ENDINGS = {
  /** The row as the update left it (none: it did not apply). */
  row: (db: Kysely<Database>, shape: Shape, next: () => unknown) => buildUpdate(db, shape, next).returningAll(),
  /** In-process check of a prediction (SQLite): whether the row left is the expected one, not the row. */
  checked: (db: Kysely<Database>, shape: Shape, next: () => unknown) => {
    const update = buildUpdate(db, shape, next);
    return update.returning(sql<number>`case when ${matchesExpected(next)} then 1 else 0 end`.as('matches'));
  },
  /** A held check of a prediction (PostgreSQL): refused unless the update left the expected row. Joinable (postgres/write-combining.ts). */
  predicted: (db: Kysely<Database>, shape: Shape, next: () => unknown) => {
    const update = buildUpdate(db, shape, next);
    const matches = matchesExpected(next);
    return joinable(db.with('updated', () => update.returningAll()).selectNoFrom([refusedUnless(sql`exists (select 1 from "updated" where ${matches})`)]));
  },
  /** `predicted`, and the operation's answer written in the same statement: refused unless both applied. */
  finishedAndPredicted: (db: Kysely<Database>, shape: Shape, next: () => unknown) => {
    const update = buildUpdate(db, shape, next);
    const matches = matchesExpected(next);
    const finish = buildFinishOperation(db, next);
    return joinable(
      db
        .with('finished', () => finish.returning('id'))
        .with('updated', () => update.returningAll())
        .selectNoFrom([refusedUnless(sql`(select count(*) from "finished") = 1 and exists (select 1 from "updated" where ${matches})`)]),
    );
  },
} satisfies Record<string, (db: Kysely<Database>, shape: Shape, next: () => unknown) => TemplateQuery>;

export type UpdateEnding = keyof typeof ENDINGS;
type EndingQuery<E extends UpdateEnding> = ReturnType<(typeof ENDINGS)[E]>;
/** The values of a statement, bound by position (valuesOf's order). */
type Values = Record<string, unknown>;

/** An update's statements, one per shape, each compiled once. */
export class TransactionUpdates<E extends UpdateEnding> {
  private readonly templates = new Map<number, { shape: Shape; template: QueryTemplate<Database, Values, EndingQuery<E>> }>();

  constructor(private readonly ending: E) {}

  execute(db: Kysely<Database>, update: TransactionUpdate, expected?: Expected, finish?: OperationFinish) {
    const { shape, template } = this.statementFor(update);
    // An array is bound as it is: its placeholders are named by position.
    return template.execute(db, valuesOf(shape, update, expected, finish) as unknown as Values);
  }

  private statementFor(update: TransactionUpdate) {
    const key = shapeKey(update);
    let found = this.templates.get(key);
    if (!found) {
      const shape = shapeOf(update);
      const end = ENDINGS[this.ending] as (db: Kysely<Database>, shape: Shape, next: () => unknown) => EndingQuery<E>;
      found = { shape, template: queryTemplate((db: Kysely<Database>, p: Params<Values>) => end(db, shape, placeholders(p))) };
      this.templates.set(key, found);
    }
    return found;
  }
}

void EVERY_PATCH_COLUMN;
