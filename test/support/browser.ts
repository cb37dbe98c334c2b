/**
 * Set-up shared by the browser tests: Debian's /usr/bin/chromium driven by playwright-core, the
 * rule that skips them (saying so) when it is missing, the dashboard build, a page that records
 * script errors and CSP violations, and the dashboard's sign-in.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import { type Browser, chromium, type Page } from 'playwright-core';
import { DASHBOARD_DIST } from '../../src/dashboard/dashboard.js';
import type { TestRuntime } from './harness.js';

export const CHROMIUM = '/usr/bin/chromium';

/** The flags every browser test launches Chromium with. */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * The `skip` option of a browser test: false when Chromium is there, otherwise the reason
 * (`<what> skipped: chromium is missing …`), which is also printed once.
 */
export function chromiumSkip(what: string): string | false {
  const skip = fs.existsSync(CHROMIUM) ? false : `${what} skipped: chromium is missing (${CHROMIUM}); install it with apt-get install chromium`;
  if (skip) console.log(`# ${skip}`);
  return skip;
}

/** npm ci builds the dashboard (prepare → build → build:dashboard); a checkout without it is built here once. */
export function ensureDashboardBuilt(): void {
  if (fs.existsSync(`${DASHBOARD_DIST}index.html`)) return;
  const built = spawnSync('npm', ['run', 'build:dashboard'], { stdio: 'inherit' });
  assert.equal(built.status, 0, 'npm run build:dashboard');
}

/** Headless Chromium; the caller closes it. */
export function launchChromium(args: string[] = CHROMIUM_ARGS): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args });
}

/** The test runtime's app on a real port (127.0.0.1); its base URL. */
export async function listenOnRealPort(rt: TestRuntime): Promise<string> {
  await rt.runtime.app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(rt.runtime.app.server.address() as AddressInfo).port}`;
}

/** Script errors and console errors (CSP violations among them) of the page, 404s aside; the list fills as the page runs. */
export function recordProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !/404|Failed to load resource/.test(msg.text())) problems.push(msg.text());
  });
  page.on('pageerror', (e) => problems.push(e.message));
  return problems;
}

/** Signs in to the dashboard at `base` with `key` and waits for the first view's heading. */
export async function signIn(page: Page, base: string, key: string, heading: string): Promise<void> {
  await page.goto(`${base}/dashboard`);
  await page.getByLabel('API key, access token or operator key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: heading }).waitFor();
}
