/**
 * `npm run client:generate`: regenerates the typed client (clients/typescript) from the OpenAPI
 * document the service serves — built in-process, without listening — and writes the spec
 * snapshot (clients/typescript/openapi.json) and the types (clients/typescript/src/generated/openapi.ts).
 * Run it after changing any route; test/client/client-fresh.test.ts fails until you do.
 */
import fs from 'node:fs';
import path from 'node:path';
import { buildOpenApiDocument } from './openapi-document.js';
import { renderClientFiles } from './render.js';

const doc = await buildOpenApiDocument();
for (const [file, content] of await renderClientFiles(doc)) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const before = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : null;
  fs.writeFileSync(file, content);
  process.stdout.write(`${before === content ? 'unchanged' : 'written  '} ${path.relative(process.cwd(), file)}\n`);
}
