/**
 * One socket write per burst of pipelined statements (PostgreSQL). node-postgres corks the socket
 * around each query's messages, so each statement is one write system call; with pipelining
 * (connect.ts) a transaction sends BEGIN with its first statement, and its held writes with its
 * COMMIT (postgres/write-combining.ts), in the same synchronous step. Corking the socket from the first
 * query of a step until the step's microtasks have run makes them one write: on a busy 2-core
 * host the writes were about a third of the event loop's time.
 */

type Stream = { cork?(): void; uncork?(): void };

interface PipelinedClient {
  query(...args: unknown[]): unknown;
  connection?: { stream?: Stream };
}

/** Corks `stream` until `release` calls the uncork it is given; false when the stream cannot be corked. */
function corkUntil(stream: Stream | undefined, release: (uncork: () => void) => void): boolean {
  if (!stream?.cork || !stream.uncork) return false;
  stream.cork();
  release(() => stream.uncork!());
  return true;
}

/** Makes the queries `client` is given in one synchronous step go out in one socket write. */
export function writeBursts(client: PipelinedClient): void {
  const query = client.query.bind(client);
  let corked = false;
  client.query = (...args: unknown[]) => {
    if (!corked)
      corked = corkUntil(client.connection?.stream, (uncork) =>
        queueMicrotask(() => {
          corked = false;
          uncork();
        }),
      );
    return query(...args);
  };
}

const heldForTurn = new WeakSet<PipelinedClient>();

/**
 * Holds what `client` is given until this turn of the event loop ends (its `setImmediate`): the
 * statements of every caller that uses it in the turn go out in one write (a shared connection,
 * postgres/shared-clients.ts). Nests around writeBursts' own cork.
 */
export function holdWritesForTurn(client: PipelinedClient): void {
  if (heldForTurn.has(client)) return;
  const held = corkUntil(client.connection?.stream, (uncork) =>
    setImmediate(() => {
      heldForTurn.delete(client);
      uncork();
    }),
  );
  if (held) heldForTurn.add(client);
}
