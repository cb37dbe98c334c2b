#!/usr/bin/env node
// The `payments` command (and `npm start`, which is `payments start`). Runs the compiled service,
// dist/cli/main.js, built by `npm ci` (prepare → build → build:server), in this process: no
// TypeScript is compiled at run time. When src/ has changed since that build (a checkout being
// edited) or there is no build, it runs src/cli/main.ts through tsx instead, saying so once on
// stderr, so that what runs is always the source as it is. Paths are resolved from this package,
// so it works from any directory; the working directory is kept for DATABASE_URL.
import fs from 'node:fs';
import module from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The latest modification time under `dir` (about 250 files: a few milliseconds). */
function newest(dir) {
  let latest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(full) : fs.statSync(full).mtimeMs);
  }
  return latest;
}

function builtAt() {
  try {
    return fs.statSync(path.join(root, 'dist', 'BUILT')).mtimeMs;
  } catch {
    return 0;
  }
}

const built = builtAt();
if (built > 0 && newest(path.join(root, 'src')) <= built) {
  // Node 22+: V8's compiled code of the modules kept between starts (in the OS temp directory).
  module.enableCompileCache?.();
  await import(pathToFileURL(path.join(root, 'dist', 'cli', 'main.js')).href);
} else {
  process.stderr.write(
    built > 0
      ? 'payments: src/ changed since the last build; running it through tsx (npm run build:server compiles it again)\n'
      : 'payments: no build in dist/; running src/ through tsx (npm run build:server compiles it)\n',
  );
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(path.join(root, 'src', 'cli', 'main.ts')).href);
}
