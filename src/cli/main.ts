/**
 * Entry point of the `payments` command (bin/payments.mjs runs it compiled, dist/cli/main.js, or
 * through tsx when src/ is newer than the build). Reads argv and
 * the environment — with src/main.ts, the only places that do — and hands them to runCli.
 */
import { runCli } from './cli.js';

const argv = process.argv.slice(2);
if (argv[0] === 'start') {
  // The same process as `npm start`: src/main.ts owns configuration, signals and shutdown.
  await import('../main.js');
} else {
  const code = await runCli(argv, process.env, {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
  });
  process.exitCode = code;
}
