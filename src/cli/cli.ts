/**
 * The `payments` operator commands. Pure over its inputs (argv, environment, output streams) so
 * that tests run it in-process; src/cli/main.ts wires it to the real process.
 */
import fs from 'node:fs';
import path from 'node:path';
import { type Config, ConfigError, fingerprint, loadConfig } from '../config.js';
import type { Connection } from '../storage/connect.js';
import type { Store } from '../storage/store.js';

/** The storage layer, loaded by the commands that open the database only: `payments --help` and `config` stay quick. */
async function storage() {
  const [{ connect }, { migrate }, { createStore }] = await Promise.all([
    import('../storage/connect.js'),
    import('../storage/migrate.js'),
    import('../storage/store.js'),
  ]);
  return { connect, migrate, createStore };
}

export interface CliIo {
  out(line: string): void;
  err(line: string): void;
}

export const USAGE = `Usage: payments <command>

Commands:
  migrate            apply pending database migrations
  start              run the API and the workers (same as npm start)
  jobs               count jobs by kind and state (finished jobs are not counted)
  jobs dead          list dead jobs (attempts exhausted; they need the operator)
  jobs retry <id>    queue a dead job again with fresh attempts
  accounts           list merchant accounts
  acquirer check --account <id>
                     ask the account's acquirer (Clearhaus GET /account) whether its agreement works
  operator-key       say where the operator key comes from
  config             print the effective configuration, secrets masked

Configuration comes from the environment (PORT, HOST, DATABASE_URL, PAYMENTS_*);
"payments config" shows the values in effect.`;

/** `****` plus a short fingerprint: enough to tell two secrets apart, nothing to use. */
const mask = (secret: string): string => `**** (sha256 ${fingerprint(secret)})`;

function maskUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '****';
    return parsed.toString();
  } catch {
    return url;
  }
}

/** Columns padded to the widest cell; the last column is left ragged. */
function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) =>
    r
      .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
}

async function withStore<T>(config: Config, fn: (store: Store, connection: Connection) => Promise<T>): Promise<T> {
  const { connect, createStore } = await storage();
  const connection = connect(config.database);
  const store = createStore(connection, { now: () => Date.now() });
  try {
    return await fn(store, connection);
  } finally {
    await store.close();
  }
}

export function describeConfig(config: Config, env: Record<string, string | undefined>): string[] {
  const database = config.database.kind === 'postgres' ? `postgres ${maskUrl(config.database.url)}` : `sqlite ${config.database.path}`;
  const rows: Array<[string, string]> = [
    ['PORT', String(config.port)],
    ['HOST', config.host],
    ['DATABASE_URL', database],
    ['data directory', config.dataDir],
    ['PAYMENTS_OPERATOR_KEY', config.operatorKey ? mask(config.operatorKey) : `(unset: kept in ${path.join(config.dataDir, 'operator.key')})`],
    ['PAYMENTS_SANDBOX', config.sandbox ? '1' : '0'],
    ['PAYMENTS_SANDBOX_LATENCY_MS', String(config.sandboxLatencyMs)],
    ['PAYMENTS_RATE_LIMITS', config.rateLimits],
    ['REDIS_URL', config.redisUrl ? maskUrl(config.redisUrl) : '(unset: rate-limit buckets in the database, or in memory on SQLite)'],
    ['PAYMENTS_REDIS_KEY_PREFIX', config.redisKeyPrefix ?? ''],
    ['PAYMENTS_ALLOW_PRIVATE_URLS', config.allowPrivateUrls ? '1' : '0'],
    ['PAYMENTS_VAULT_KEY', config.vaultKey ? '**** (set)' : `(unset: kept in ${path.join(config.dataDir, 'vault.key')})`],
    ['PAYMENTS_PUBLIC_URL', config.publicUrl],
    ['LOG_LEVEL', config.logLevel],
    ['PAYMENTS_WORKERS', config.workers ? '1' : '0'],
    ['PAYMENTS_SHUTDOWN_TIMEOUT_MS', String(config.shutdownTimeoutMs)],
    ['PAYMENTS_MAX_BACKLOG', config.maxBacklog === 0 ? '0 (off)' : String(config.maxBacklog)],
    ['PAYMENTS_MAX_LAG_MS', config.maxLagMs === 0 ? '0 (off)' : `${config.maxLagMs} ms`],
    ['PAYMENTS_MIT_CAP_PER_MINUTE', config.mitCapPerMinute === 0 ? '0 (off)' : String(config.mitCapPerMinute)],
    ['PAYMENTS_MIT_BATCH_CAP_PER_MINUTE', config.mitBatchCapPerMinute === 0 ? '0 (off)' : String(config.mitBatchCapPerMinute)],
    // The signing key id is an API key of the partner's: masked like the other secrets.
    ['CLEARHAUS_SIGNING_KEY_ID', config.clearhaus ? mask(config.clearhaus.signingKeyId) : '(unset: no Clearhaus agreements)'],
    ...(config.clearhaus
      ? ([
          ['CLEARHAUS_SIGNING_KEY_FILE', config.clearhaus.signingKeyFile],
          ['CLEARHAUS_URL', config.clearhaus.url],
          ['CLEARHAUS_TIMEOUT_MS', String(config.clearhaus.timeoutMs)],
          ['CLEARHAUS_MAX_IN_FLIGHT', String(config.clearhaus.maxInFlight)],
        ] as Array<[string, string]>)
      : []),
  ];
  return table(rows.map(([name, value]) => [name, value, name in env && env[name] !== '' ? '' : '(default)']).map((r) => (r[2] ? r : r.slice(0, 2))));
}

/** Runs one command; returns the exit code. */
export async function runCli(argv: string[], env: Record<string, string | undefined>, io: CliIo): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === 'help' || command === '--help' || command === '-h') {
    io.out(USAGE);
    return command ? 0 : 2;
  }
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      io.err(`payments: invalid configuration: ${err.message}`);
      return 78;
    }
    throw err;
  }

  try {
    switch (command) {
      case 'migrate': {
        const { connect, migrate } = await storage();
        const connection = connect(config.database);
        try {
          const { applied } = await migrate(connection);
          io.out(applied.length ? `applied ${applied.length} migration(s): ${applied.join(', ')}` : 'the database is up to date');
        } finally {
          await connection.close();
        }
        return 0;
      }
      case 'jobs':
        return await jobs(config, rest, io);
      case 'accounts':
        return await withStore(config, async (store) => {
          const { items, total } = await store.accounts.list(0, 500);
          if (total === 0) {
            io.out('no accounts');
            return 0;
          }
          const rows = items.map((a) => [a.id, a.status, a.currencyCode, a.createdAt, `${a.name} <${a.email}>`]);
          for (const line of table([['ID', 'STATUS', 'CURRENCY', 'CREATED', 'NAME'], ...rows])) io.out(line);
          if (total > items.length) io.out(`(${total - items.length} more not shown)`);
          return 0;
        });
      case 'acquirer': {
        const { acquirerCheck } = await import('./acquirer-check.js');
        return await withStore(config, (store) => acquirerCheck(config, store, rest, io));
      }
      case 'operator-key': {
        if (config.operatorKey) {
          io.out(`from the environment variable PAYMENTS_OPERATOR_KEY (sha256 ${fingerprint(config.operatorKey)})`);
        } else {
          const file = path.join(config.dataDir, 'operator.key');
          io.out(fs.existsSync(file) ? `in ${file}` : `${file} (not created yet: the first start generates it)`);
        }
        return 0;
      }
      case 'config':
        for (const line of describeConfig(config, env)) io.out(line);
        return 0;
      default:
        io.err(`payments: unknown command "${command}"`);
        io.err(USAGE);
        return 2;
    }
  } catch (err) {
    // Operator-facing: one line, no stack (a missing table usually means `payments migrate` was not run).
    io.err(`payments ${command}: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}

async function jobs(config: Config, args: string[], io: CliIo): Promise<number> {
  const [sub, id] = args;
  return withStore(config, async (store) => {
    if (sub === undefined) {
      const counts = await store.jobs.countsByState();
      if (counts.length === 0) {
        io.out('no pending, running or dead jobs');
        return 0;
      }
      const rows = [...counts].sort((a, b) => a.kind.localeCompare(b.kind) || a.state.localeCompare(b.state)).map((c) => [c.kind, c.state, String(c.count)]);
      for (const line of table([['KIND', 'STATE', 'COUNT'], ...rows])) io.out(line);
      return 0;
    }
    if (sub === 'dead') {
      const dead = await store.jobs.listDead(200);
      if (dead.length === 0) {
        io.out('no dead jobs');
        return 0;
      }
      const rows = dead.map((j) => [j.id, j.kind, `${j.attempts}/${j.maxAttempts}`, j.updatedAt, (j.lastError ?? '').replace(/\s+/g, ' ').slice(0, 120)]);
      for (const line of table([['ID', 'KIND', 'ATTEMPTS', 'DIED AT', 'LAST ERROR'], ...rows])) io.out(line);
      return 0;
    }
    if (sub === 'retry') {
      if (!id) {
        io.err('payments jobs retry: give the id of a dead job (see `payments jobs dead`)');
        return 2;
      }
      // The sandbox clock offset is what the runner compares runAt with: queue the job at service time.
      const offset = await store.settings.loadOffsetMs().catch(() => 0);
      if (await store.jobs.retryDead(id, Date.now() + (config.sandbox ? offset : 0))) {
        io.out(`job ${id} queued again`);
        return 0;
      }
      io.err(`payments jobs retry: no dead job with id ${id}`);
      return 1;
    }
    io.err(`payments jobs: unknown subcommand "${sub}" (use: jobs, jobs dead, jobs retry <id>)`);
    return 2;
  });
}
