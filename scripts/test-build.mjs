// Compiles the TypeScript sources the tests load into plain JavaScript once per `npm test`, so that
// each test file's process loads JavaScript directly instead of through tsx's module hooks (the
// test harness: 1.8 s of CPU per file through the hooks, 0.74 s compiled).
//
// Each run builds its own copy, TEST_BUILD_ROOT/<pid>, so that two runs in one checkout (the suite
// and a single file, say) do not replace each other's files; a run removes the copies of runs that
// have ended (the last one stays, for reading a failure's stack trace).
//
// The copy mirrors the repository: the directories holding TypeScript are copied, every .ts file
// beside its .js, so that paths taken relative to a module (the migrations, the repository root
// that several tests compute) point into the copy as they would into the repository; every other
// entry (node_modules, dist/, dashboard/dist/ …) is a symlink to the original. The workspace
// client resolves, for the tests, to its compiled copy.
import { buildSync } from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';

export const TEST_BUILD_ROOT = path.join('node_modules', '.cache', 'payments-tests');

/** The directories with TypeScript that tests load (directly or through a spawned process). */
const COMPILED = ['src', 'test', 'bench', 'scripts', 'clients', 'dashboard'];
/** Inside those, linked rather than copied: built output and installed packages. */
const LINKED = new Set(['dist', 'node_modules']);
const LEFT_OUT = new Set(['.git', 'data']);
const CLIENT = '@payments-service/client';

function tsFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return LINKED.has(entry.name) ? [] : tsFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}

function copyLinkingBuilt(from, to) {
  fs.mkdirSync(to, { recursive: true });
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    const [source, target] = [path.join(from, entry.name), path.join(to, entry.name)];
    if (entry.isDirectory() && LINKED.has(entry.name)) fs.symlinkSync(source, target);
    else if (entry.isDirectory()) copyLinkingBuilt(source, target);
    else fs.copyFileSync(source, target);
  }
}

/**
 * The copy's files and directories take the times of their originals (a compiled .js its .ts's):
 * a test compares src/ with the time of the last build (dist/BUILT), as `find -newer` does.
 * Links are left alone; entries with no original (the client's link) too.
 */
function keepTimes(from, to) {
  for (const entry of fs.readdirSync(to, { withFileTypes: true })) {
    if (entry.isSymbolicLink()) continue;
    let source = path.join(from, entry.name);
    if (!fs.existsSync(source) && entry.name.endsWith('.js')) source = source.replace(/\.js$/, '.ts');
    if (!fs.existsSync(source)) continue;
    const target = path.join(to, entry.name);
    if (entry.isDirectory()) keepTimes(source, target);
    const { atime, mtime } = fs.statSync(source);
    fs.utimesSync(target, atime, mtime);
  }
}

/** Removes the copies whose run has ended (and anything else found there). */
function removeEnded(parent) {
  if (!fs.existsSync(parent)) return;
  for (const name of fs.readdirSync(parent)) {
    const pid = Number(name);
    if (/^\d+$/.test(name) && pid !== process.pid && running(pid)) continue;
    fs.rmSync(path.join(parent, name), { recursive: true, force: true });
  }
}

function running(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/** Builds the copy under `root` (the repository); returns its absolute path. */
export function buildTests(root = process.cwd()) {
  const parent = path.join(root, TEST_BUILD_ROOT);
  removeEnded(parent);
  const out = path.join(parent, String(process.pid));
  fs.mkdirSync(out, { recursive: true });
  for (const name of fs.readdirSync(root)) {
    if (LEFT_OUT.has(name)) continue;
    const from = path.join(root, name);
    const to = path.join(out, name);
    if (COMPILED.includes(name)) copyLinkingBuilt(from, to);
    else fs.symlinkSync(from, to);
  }
  const entryPoints = COMPILED.flatMap((dir) => (fs.existsSync(path.join(root, dir)) ? tsFiles(path.join(root, dir)) : []));
  buildSync({
    entryPoints,
    outdir: out,
    outbase: root,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    tsconfig: path.join(root, 'tsconfig.json'),
    logLevel: 'warning',
  });
  // The workspace client resolves to the copy's compiled sources, not to its package build
  // (clients/typescript/dist, made by `npm pack`, which a fresh clone does not have).
  const clientDir = path.join(out, 'clients', 'typescript');
  const manifest = JSON.parse(fs.readFileSync(path.join(clientDir, 'package.json'), 'utf8'));
  manifest.exports = { ...manifest.exports, '.': './src/index.js' };
  delete manifest.main;
  delete manifest.types;
  fs.writeFileSync(path.join(clientDir, 'package.json'), JSON.stringify(manifest, null, 2));
  const link = path.join(out, 'test', 'node_modules', CLIENT);
  fs.mkdirSync(path.dirname(link), { recursive: true });
  fs.symlinkSync(path.relative(path.dirname(link), clientDir), link);
  keepTimes(root, out);
  return out;
}
