/**
 * Builds the OpenAPI document exactly as the service serves it at GET /openapi.json, without
 * listening on a port: a throw-away runtime on a temporary SQLite file (sandbox on, so that the
 * sandbox routes the client drives in tests are in it; no workers), `app.ready()`, then
 * `app.swagger()`. Used by `npm run client:generate` and by test/client/client-fresh.test.ts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { createRuntime } from '../../src/runtime.js';

/** The `servers` URL written into the snapshot: the default address of `npm start`. */
export const SNAPSHOT_PUBLIC_URL = 'http://127.0.0.1:8080';

export async function buildOpenApiDocument(): Promise<Record<string, unknown>> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'payments-openapi-'));
  // Only the environment this document depends on, never the caller's: defaults for the rest.
  const config = loadConfig({
    DATABASE_URL: `sqlite:${path.join(dataDir, 'payments.db')}`,
    PAYMENTS_OPERATOR_KEY: 'op_openapi_document_builder',
    PAYMENTS_SANDBOX: '1',
    PAYMENTS_PUBLIC_URL: SNAPSHOT_PUBLIC_URL,
    PAYMENTS_WORKERS: '0',
    LOG_LEVEL: 'silent',
  });
  const runtime = await createRuntime(config, { logger: createLogger('silent'), startWorkers: false });
  try {
    await runtime.app.ready();
    // The served document, through the same route a client fetches it from.
    const res = await runtime.app.inject({ method: 'GET', url: '/openapi.json' });
    if (res.statusCode !== 200) throw new Error(`GET /openapi.json answered ${res.statusCode}`);
    return JSON.parse(res.body) as Record<string, unknown>;
  } finally {
    await runtime.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
