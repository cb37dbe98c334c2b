/**
 * The published error list (docs/errors.md) and the code's catalogue are the same: every code,
 * its HTTP status and message; the transaction and operation error codes likewise. Also checks
 * that the error handler answers each catalogue code with its status and body.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { toErrorResponse } from '../../src/http/error-handler.js';
import { AppError, ERROR_CATALOGUE, type ErrorCode, OPERATION_ERROR_CODES, TRANSACTION_ERROR_CODES } from '../../src/shared/errors.js';

const DOC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs/errors.md');

/** Rows of the markdown table under `## heading`, as arrays of cell texts without backticks. */
function table(markdown: string, heading: string): string[][] {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  assert.notEqual(start, -1, `docs/errors.md has a "## ${heading}" section`);
  const rest = markdown.slice(start + heading.length + 5);
  const end = rest.indexOf('\n## ');
  const section = end === -1 ? rest : rest.slice(0, end);
  return section
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .slice(2) // header and separator
    .map((line) =>
      line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim().replace(/^`|`$/g, '')),
    );
}

describe('docs/errors.md ↔ src/shared/errors.ts', () => {
  const markdown = fs.readFileSync(DOC, 'utf8');

  test('HTTP error codes: same codes, statuses and messages, in catalogue order', () => {
    const documented = table(markdown, 'HTTP error codes').map(([code, status, meaning]) => ({ code, status: Number(status), message: meaning }));
    const catalogue = Object.entries(ERROR_CATALOGUE).map(([code, { status, message }]) => ({ code, status, message }));
    assert.deepEqual(documented, catalogue);
  });

  test('transaction error codes', () => {
    assert.deepEqual(
      table(markdown, 'Transaction error codes').map((row) => row[0]),
      [...TRANSACTION_ERROR_CODES],
    );
  });

  test('operation error codes', () => {
    assert.deepEqual(
      table(markdown, 'Operation error codes').map((row) => row[0]),
      [...OPERATION_ERROR_CODES],
    );
  });

  test('every documented row has a meaning', () => {
    for (const heading of ['HTTP error codes', 'Transaction error codes', 'Operation error codes']) {
      for (const row of table(markdown, heading)) assert.ok(row[row.length - 1]!.length > 5, `${heading}: ${row[0]}`);
    }
  });
});

describe('the error handler maps the catalogue', () => {
  test('every code answers with its status and the exact body keys', () => {
    for (const code of Object.keys(ERROR_CATALOGUE) as ErrorCode[]) {
      const { status, body, unexpected } = toErrorResponse(new AppError(code));
      assert.equal(status, ERROR_CATALOGUE[code].status, code);
      assert.deepEqual(body, { success: false, errorCode: code, message: ERROR_CATALOGUE[code].message });
      assert.equal(unexpected, false);
    }
  });

  test('an unknown error is a bare 500 without internals', () => {
    const { status, body, unexpected } = toErrorResponse(new TypeError('secret internals at /srv/app.js:1'));
    assert.equal(status, 500);
    assert.deepEqual(body, { success: false, errorCode: 'SERVER_ERROR', message: 'An unexpected error occurred.' });
    assert.equal(unexpected, true);
  });
});
