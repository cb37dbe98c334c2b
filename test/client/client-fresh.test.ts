/**
 * The typed client (clients/typescript) must match the OpenAPI document the service serves now.
 * When this fails, a route changed after the client was generated: run
 *
 *     npm run client:generate
 *
 * and commit clients/typescript/openapi.json and clients/typescript/src/generated/openapi.ts.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { buildOpenApiDocument } from '../../scripts/client/openapi-document.js';
import { renderClientFiles, SPEC_FILE } from '../../scripts/client/render.js';

const FIX = 'Run `npm run client:generate` and commit clients/typescript/openapi.json and clients/typescript/src/generated/openapi.ts.';

/** "GET /public/api/v1/x" for every operation of a document. */
function operations(doc: unknown): Set<string> {
  const paths = (doc as { paths?: Record<string, Record<string, unknown>> } | null)?.paths ?? {};
  return new Set(Object.entries(paths).flatMap(([p, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${p}`)));
}

test('the generated TypeScript client is current with the OpenAPI document the service serves', { timeout: 120_000 }, async () => {
  const served = await buildOpenApiDocument();
  const expected = await renderClientFiles(served);
  const stale: string[] = [];
  for (const [file, content] of expected) {
    const current = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : null;
    if (current !== content) stale.push(path.relative(process.cwd(), file));
  }
  if (stale.length === 0) return;

  // Say what changed, in route terms, to make the failure readable.
  let snapshot: unknown = null;
  try {
    snapshot = JSON.parse(fs.readFileSync(SPEC_FILE, 'utf8'));
  } catch {}
  const before = operations(snapshot);
  const now = operations(served);
  const added = [...now].filter((op) => !before.has(op));
  const removed = [...before].filter((op) => !now.has(op));
  const changed = added.length === 0 && removed.length === 0 ? ' (schemas, summaries or parameters of existing routes)' : '';
  assert.fail(
    [
      `The typed client is stale: the OpenAPI document the service serves has changed since it was generated${changed}.`,
      `  out of date: ${stale.join(', ')}`,
      ...(added.length ? [`  routes added: ${added.join(', ')}`] : []),
      ...(removed.length ? [`  routes removed: ${removed.join(', ')}`] : []),
      `  fix: ${FIX}`,
    ].join('\n'),
  );
});
