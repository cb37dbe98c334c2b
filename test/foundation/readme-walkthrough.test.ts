/**
 * The README's "first payment in five minutes" runs as written: its ```sh walkthrough blocks are
 * joined into one bash script and run with real curl and jq against a service listening on a real
 * port (SQLite, sandbox merchant of src/bootstrap.ts), with BASE, KEY, OP and CALLBACK_PORT set as
 * the README tells the reader to set them. The blocks check their own answers (`jq -e`, the wait
 * for the DELIVERED callback, which the README's receiver only answers 2xx when the Authorization
 * header and the Standard Webhooks signature verify). Also: the README stays a user's README — at
 * most 300 lines, the quick-start commands stated, every relative link pointing at a file.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ensureSandboxAccount } from '../../src/bootstrap.js';
import { startTestRuntime } from '../support/harness.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// The test runs from a compiled mirror of the repository (scripts/test.mjs), which holds no
// Markdown: read the README of the repository itself.
const README_PATH = [path.join(ROOT, 'README.md'), path.join(process.cwd(), 'README.md')].find((p) => fs.existsSync(p))!;
const README = fs.readFileSync(README_PATH, 'utf8');
const REPO = path.dirname(README_PATH);

function walkthroughBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh walkthrough\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}

const missingTool = ['bash', 'curl', 'jq'].find((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function runScript(script: string, cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number) {
  return new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn('bash', ['-c', script], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const timer = setTimeout(() => {
      output += `\n[test] the walkthrough did not finish within ${timeoutMs} ms; killed\n`;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe('README', () => {
  test('is a user README: at most 300 lines, states the quick start, its relative links resolve', () => {
    const lines = README.split('\n').length - (README.endsWith('\n') ? 1 : 0);
    assert.ok(lines <= 300, `README.md has ${lines} lines; keep it at most 300 (measurements go to docs/performance.md)`);
    assert.match(README, /npm ci && npm start/);
    assert.match(README, /^npm test\b/m);
    const links = [...README.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((href) => !/^(https?:|#|mailto:)/.test(href));
    assert.ok(links.length > 0);
    for (const href of links) {
      const file = href.split('#')[0]!;
      assert.ok(fs.existsSync(path.join(REPO, file)), `README links to ${href}, which does not exist`);
    }
  });

  test(
    'the first-payment walkthrough runs as written against a running service (SQLite)',
    { skip: missingTool && `${missingTool} is not installed` },
    async () => {
      const blocks = walkthroughBlocks(README);
      assert.ok(blocks.length >= 5, `the README has its walkthrough blocks (found ${blocks.length})`);
      const script = blocks.join('\n');
      for (const path of ['/public/api/v1/cit', '/sandbox/v1/sessions/$SESSION/complete', '/public/api/v1/mit', '/capture', '/refund']) {
        assert.ok(script.includes(path), `the walkthrough calls ${path}`);
      }

      const t = await startTestRuntime('sqlite');
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'readme-walkthrough-'));
      try {
        await t.runtime.app.listen({ port: 0, host: '127.0.0.1' });
        const base = `http://127.0.0.1:${(t.runtime.app.server.address() as AddressInfo).port}`;
        const sandbox = await ensureSandboxAccount(t.runtime);
        const env = {
          ...process.env,
          PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`,
          BASE: base,
          KEY: sandbox.apiKey,
          OP: t.operatorKey,
          CALLBACK_PORT: String(await freePort()),
        };
        // The receiver runs in the background (`node receiver.mjs &`): it is stopped however the script ends.
        const prologue = "set -euo pipefail\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n";
        const { code, output } = await runScript(prologue + script, dir, env, 90_000);
        assert.equal(code, 0, `the walkthrough failed (exit ${code}):\n${output}`);
        assert.match(output, /callback [^\n]*SUCCESS \{ authorized: true, signed: true, fresh: true \}/, `the receiver verified the callback:\n${output}`);
        const mit = JSON.parse(fs.readFileSync(path.join(dir, 'mit.json'), 'utf8'));
        const tx = (await t.client(sandbox.apiKey).get(`/public/api/v1/transactions/${mit.transaction.id}`)).body;
        assert.equal(tx.transaction.state, 'SUCCESS');
        assert.deepEqual({ captured: tx.aggregates.captured, refunded: tx.aggregates.refunded }, { captured: 2500, refunded: 1000 });
      } finally {
        await t.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
