/**
 * The arrows point one way (docs: ARCHITECTURE "The house"): a module under src/modules never
 * imports the HTTP driver (src/http), the storage adapters (src/storage), Fastify, a SQL driver
 * (better-sqlite3, pg, kysely), undici, or reads `process.env` (config.ts does, once). Read from the
 * syntax tree (TypeScript's parser), so that type-only imports, `import('x')` types, re-exports and
 * dynamic imports count, and comments or strings that merely mention a name do not. The layers and
 * their rules are drawn in docs/architecture.md ("The layers"); a connector (src/connectors) likewise
 * reaches into no other layer's adapters: no src/http, src/storage, src/jobs, src/delivery, Fastify,
 * Kysely or a SQL driver, and no process.env.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import ts from 'typescript';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const MODULES = path.join(ROOT, 'src/modules');
const CONNECTORS = path.join(ROOT, 'src/connectors');

/** Folders of src that a module must not reach into, with the reason given when one does. */
const FORBIDDEN_FOLDERS: Array<[string, string]> = [
  [path.join(ROOT, 'src/http'), 'imports the HTTP driver (src/http)'],
  [path.join(ROOT, 'src/storage'), 'imports a storage adapter (src/storage); a module declares the port it needs'],
];

/** Folders a connector must not reach into: it translates one acquirer's API and nothing more. */
const CONNECTOR_FORBIDDEN_FOLDERS: Array<[string, string]> = [
  ...FORBIDDEN_FOLDERS,
  [path.join(ROOT, 'src/jobs'), 'imports the job runner (src/jobs)'],
  [path.join(ROOT, 'src/delivery'), 'imports outbound delivery (src/delivery)'],
];

/** Packages a module must not import (the package itself or any of its subpaths). */
const FORBIDDEN_PACKAGES: Array<[RegExp, string]> = [
  [/^(fastify|@fastify\/.+)$/, 'imports Fastify'],
  [/^better-sqlite3$/, 'imports a SQL driver'],
  [/^pg(-.+)?$/, 'imports a SQL driver'],
  [/^kysely$/, 'imports Kysely'],
  [/^undici$/, 'imports undici'],
  [/^(node:)?process$/, 'imports node:process (process.env belongs to config.ts)'],
];

/** Packages a connector must not import: undici is its wire, the rest belongs to other layers. */
const CONNECTOR_FORBIDDEN_PACKAGES = FORBIDDEN_PACKAGES.filter(([pattern]) => !pattern.test('undici'));

function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

/** Every module specifier the file names: imports, re-exports, `import x = require()`, `import()`, `require()`, `import('x').T`. */
function specifiers(source: ts.SourceFile): Array<{ specifier: string; line: number }> {
  const found: Array<{ specifier: string; line: number }> = [];
  const add = (node: ts.Node | undefined) => {
    if (node && ts.isStringLiteralLike(node)) found.push({ specifier: node.text, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1 });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) add(node.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) add(node.moduleReference.expression);
    else if (
      ts.isCallExpression(node) &&
      (node.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(node.expression) && node.expression.text === 'require'))
    ) {
      add(node.arguments[0]);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node.argument.literal);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** `process.env`, `process['env']` and `const { env } = process`. */
function processEnvLines(source: ts.SourceFile): number[] {
  const lines: number[] = [];
  const isProcess = (node: ts.Node) => ts.isIdentifier(node) && node.text === 'process';
  const visit = (node: ts.Node): void => {
    const hit =
      (ts.isPropertyAccessExpression(node) && isProcess(node.expression) && node.name.text === 'env') ||
      (ts.isElementAccessExpression(node) &&
        isProcess(node.expression) &&
        ts.isStringLiteralLike(node.argumentExpression) &&
        node.argumentExpression.text === 'env') ||
      (ts.isVariableDeclaration(node) &&
        node.initializer !== undefined &&
        isProcess(node.initializer) &&
        ts.isObjectBindingPattern(node.name) &&
        node.name.elements.some((element) => (element.propertyName ?? element.name).getText(source) === 'env'));
    if (hit) lines.push(source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return lines;
}

/** The rules a module file breaks, one line each ("file:line: reason (specifier)"). */
function violations(file: string, text: string, folders = FORBIDDEN_FOLDERS, packages = FORBIDDEN_PACKAGES): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const where = (line: number) => `${path.relative(ROOT, file)}:${line}`;
  const found: string[] = [];
  for (const { specifier, line } of specifiers(source)) {
    if (specifier.startsWith('.')) {
      const target = path.resolve(path.dirname(file), specifier);
      for (const [folder, reason] of folders) {
        if (target === folder || target.startsWith(folder + path.sep)) found.push(`${where(line)}: ${reason} (${specifier})`);
      }
      continue;
    }
    for (const [pattern, reason] of packages) {
      if (pattern.test(packageName(specifier))) found.push(`${where(line)}: ${reason} (${specifier})`);
    }
  }
  for (const line of processEnvLines(source)) found.push(`${where(line)}: reads process.env`);
  return found;
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.(ts|mts|cts|js|mjs|cjs)$/.test(entry.name) ? [full] : [];
  });
}

describe('modules are free of HTTP, storage drivers and the environment', () => {
  test('the checker sees every kind of forbidden import and process.env (and not mentions in comments or strings)', () => {
    const file = path.join(MODULES, 'example/example.service.ts');
    const bad = [
      "import { PageQuery } from '../../http/pagination.js';",
      "import type { FastifyRequest } from 'fastify';",
      "export { swagger } from '@fastify/swagger';",
      "import Database from 'better-sqlite3';",
      "import type { Kysely } from 'kysely';",
      "const pg = await import('pg');",
      "const { request } = require('undici');",
      "type Db = import('../../storage/database.js').Database;",
      "import { env } from 'node:process';",
      'const secret = process.env.SECRET;',
      "const other = process['env'];",
      'const { env: environment } = process;',
    ];
    const found = violations(file, bad.join('\n'));
    assert.equal(found.length, bad.length, found.join('\n'));
    bad.forEach((_line, index) =>
      assert.ok(
        found.some((v) => v.includes(`example.service.ts:${index + 1}:`)),
        `line ${index + 1} is reported`,
      ),
    );

    const fine = [
      '// process.env is read by config.ts; modules import nothing from src/http or fastify',
      "const text = 'process.env and fastify are named here';",
      "import { AppError } from '../../shared/errors.js';",
      "import { Type } from '@sinclair/typebox';",
      "import { randomUUID } from 'node:crypto';",
      "import { something } from '../../httpish/thing.js';",
      "import { pgp } from 'pgp';",
      'const cwd = process.cwd();',
    ];
    assert.deepEqual(violations(file, fine.join('\n')), []);
  });

  test('no file under src/modules imports src/http, src/storage, Fastify, a SQL driver, undici, or reads process.env', () => {
    const files = sourceFiles(MODULES);
    assert.ok(files.length > 50, `src/modules holds ${files.length} source files`);
    const found = files.flatMap((file) => violations(file, fs.readFileSync(file, 'utf8')));
    assert.deepEqual(found, [], `modules must not depend on drivers:\n${found.join('\n')}`);
  });
});

/**
 * Speed machinery is storage's business (docs/architecture.md): a repository offers one method per
 * intent (reserve on the row as read, apply an answer) and decides by itself whether to predict the
 * row, hold a write, template a statement or run a stale commit again.
 */
const MACHINERY =
  /\b(predict|predicting|StaleWrite|staleWriteOf|queryTemplate|keyedTemplates|joinable|\w+Expecting|lingerMs|\w*LINGER\w*|replayable|UnitOptions|deferrable)\b/;

/** `text` without its comments (a comment may name what the code leaves to storage). */
function codeOf(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

describe('speed machinery stays in storage', () => {
  test('no file of the domain (modules, jobs, delivery, connectors) predicts rows, templates statements, marks writes or times commits', () => {
    const domain = [MODULES, ...['src/jobs', 'src/delivery', 'src/connectors'].map((dir) => path.join(ROOT, dir))];
    const found = domain.flatMap(sourceFiles).flatMap((file) =>
      codeOf(fs.readFileSync(file, 'utf8'))
        .split('\n')
        .flatMap((line, i) => (MACHINERY.test(line) ? [`${path.relative(ROOT, file)}:${i + 1}: ${line.trim()}`] : [])),
    );
    assert.deepEqual(found, [], `storage machinery in the domain:\n${found.join('\n')}`);
  });

  test('the rule sees machinery in code and not in comments', () => {
    assert.ok(MACHINERY.test(codeOf('await repos.transactions.updateExpecting(update, expected);')));
    assert.ok(MACHINERY.test(codeOf('const answerIn = (predict: boolean) => 1;')));
    assert.ok(MACHINERY.test(codeOf('await this.deps.transaction(work, { lingerMs: 10, replayable: true });')));
    assert.ok(!MACHINERY.test(codeOf('// the store may predict the row\n/** or hold it (joinable) */ const x = 1;')));
  });
});

describe('connectors are free of the other layers', () => {
  test('no file under src/connectors imports src/http, src/storage, src/jobs, src/delivery, Fastify, Kysely, a SQL driver, or reads process.env', () => {
    const files = sourceFiles(CONNECTORS);
    assert.ok(files.length > 5, `src/connectors holds ${files.length} source files`);
    const found = files.flatMap((file) => violations(file, fs.readFileSync(file, 'utf8'), CONNECTOR_FORBIDDEN_FOLDERS, CONNECTOR_FORBIDDEN_PACKAGES));
    assert.deepEqual(found, [], `connectors must not depend on other layers:\n${found.join('\n')}`);
  });

  test('the connector rules see a forbidden import and allow undici', () => {
    const file = path.join(CONNECTORS, 'example/connector.ts');
    const bad = [
      "import { newJob } from '../../jobs/catalogue.js';",
      "import { send } from '../../delivery/http-sender.js';",
      "import type { Kysely } from 'kysely';",
    ];
    assert.equal(violations(file, bad.join('\n'), CONNECTOR_FORBIDDEN_FOLDERS, CONNECTOR_FORBIDDEN_PACKAGES).length, bad.length);
    assert.deepEqual(violations(file, "import { Pool } from 'undici';", CONNECTOR_FORBIDDEN_FOLDERS, CONNECTOR_FORBIDDEN_PACKAGES), []);
  });
});
