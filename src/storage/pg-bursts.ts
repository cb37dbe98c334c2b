/**
 * One socket write per burst of pipelined statements (PostgreSQL). node-postgres corks the socket
 * around each query's messages, so each statement is one write system call; with pipelining
 * (connect.ts) a transaction sends BEGIN with its first statement, and its held writes with its
 * COMMIT (pg-write-combining.ts), in the same synchronous step. Corking the socket from the first
 * query of a step until the step's microtasks have run makes them one write: on a busy 2-core
 * host the writes were about a third of the event loop's time.
 */

interface PipelinedClient {
  query(...args: unknown[]): unknown;
  connection?: { stream?: { cork?(): void; uncork?(): void } };
}

/** Makes the queries `client` is given in one synchronous step go out in one socket write. */
export function writeBursts(client: PipelinedClient): void {
  const query = client.query.bind(client);
  let corked = false;
  client.query = (...args: unknown[]) => {
    const stream = client.connection?.stream;
    if (!corked && stream?.cork && stream.uncork) {
      corked = true;
      stream.cork();
      queueMicrotask(() => {
        corked = false;
        stream.uncork!();
      });
    }
    return query(...args);
  };
}
