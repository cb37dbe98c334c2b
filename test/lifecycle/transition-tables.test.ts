/**
 * The transition tables drawn in src/modules/transactions/README.md are the ones in the code, and
 * the code refuses every pair the tables leave blank.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import {
  nextOperationState,
  nextTransactionState,
  OPERATION_TRANSITIONS,
  type OperationEvent,
  type OperationState,
  TRANSACTION_TRANSITIONS,
  type TransactionEvent,
  type TransactionState,
} from '../../src/modules/transactions/transaction.js';

const README = fs.readFileSync(new URL('../../src/modules/transactions/README.md', import.meta.url), 'utf8');

/** The markdown table between `<!-- name:start -->` and `<!-- name:end -->` as {state: {event: next}}. */
function readmeTable(name: string): Record<string, Record<string, string>> {
  const start = README.indexOf(`<!-- ${name}:start -->`);
  const end = README.indexOf(`<!-- ${name}:end -->`);
  assert.ok(start >= 0 && end > start, `README has the ${name} table`);
  const rows = README.slice(start, end)
    .split('\n')
    .filter((line) => line.startsWith('|'));
  const cells = (line: string) =>
    line
      .split('|')
      .slice(1, -1)
      .map((c) => c.trim());
  const events = cells(rows[0]!).slice(1);
  return Object.fromEntries(
    rows.slice(2).map((line) => {
      const [state, ...next] = cells(line);
      return [state!, Object.fromEntries(events.flatMap((event, i) => (next[i] ? [[event, next[i]!]] : [])))];
    }),
  );
}

test('the transaction table in the README is TRANSACTION_TRANSITIONS', () => {
  assert.deepEqual(readmeTable('transaction-transitions'), TRANSACTION_TRANSITIONS);
});

test('the operation table in the README is OPERATION_TRANSITIONS', () => {
  assert.deepEqual(readmeTable('operation-transitions'), OPERATION_TRANSITIONS);
});

test('final states take no event; blank cells are refused', () => {
  const events: TransactionEvent[] = ['dispatch', 'approve', 'decline', 'reject', 'abort', 'expire'];
  for (const state of ['SUCCESS', 'FAILED'] as TransactionState[]) {
    for (const event of events) assert.equal(nextTransactionState(state, event), null, `${state} + ${event}`);
  }
  assert.equal(nextTransactionState('PROCESSING', 'dispatch'), null, 'dispatched once');
  assert.equal(nextTransactionState('PROCESSING', 'reject'), null, 'only a new sale is rejected early');
  for (const state of ['SUCCESS', 'FAILED'] as OperationState[]) {
    for (const event of ['approve', 'decline'] as OperationEvent[]) assert.equal(nextOperationState(state, event), null, `${state} + ${event}`);
  }
});
