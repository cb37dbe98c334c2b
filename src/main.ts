/**
 * Composition root: reads the configuration (the only place that does), starts storage, workers
 * and HTTP, prints how to reach the service, and owns graceful shutdown.
 */
import { startBanner } from './banner.js';
import { ConfigError, loadConfig } from './config.js';
import { ensureSandboxAccount } from './bootstrap.js';
import { createLogger } from './logger.js';
import { createRuntime } from './runtime.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`payments: invalid configuration: ${err.message}\n`);
      process.exit(78);
    }
    throw err;
  }
  const logger = createLogger(config.logLevel);
  let runtime;
  try {
    runtime = await createRuntime(config, { logger });
  } catch (err) {
    process.stderr.write(`payments: cannot start: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests and jobs');
    const force = setTimeout(() => {
      logger.error('shutdown took too long; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs + 5_000);
    force.unref();
    try {
      await runtime.close();
      process.exit(0);
    } catch (err) {
      logger.error({ err }, 'error during shutdown');
      process.exit(1);
    }
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));

  let sandbox = null;
  try {
    sandbox = config.sandbox ? await ensureSandboxAccount(runtime) : null;
  } catch (err) {
    // e.g. a vault key that no longer opens the saved sandbox credentials: one clear line, no stack.
    process.stderr.write(`payments: cannot prepare the sandbox merchant: ${err instanceof Error ? err.message : String(err)}\n`);
    await runtime.close();
    process.exit(1);
  }
  try {
    await runtime.app.listen({ port: config.port, host: config.host });
  } catch (err) {
    process.stderr.write(`payments: cannot listen on ${config.host}:${config.port}: ${err instanceof Error ? err.message : String(err)}\n`);
    await runtime.close();
    process.exit(1);
  }

  process.stdout.write(startBanner({ config, operatorKey: runtime.operatorKey, operatorKeyGenerated: runtime.operatorKeyGenerated, sandbox }));
}

void main();
