/**
 * The event outbox port: domain events (INTERFACE §8 names, e.g. `transaction.captured.v1`) are
 * appended in the same database transaction as the change they report, so that an event exists
 * exactly when its change committed. Delivery (webhook fan-out) reads the outbox separately.
 */
export interface OutboxEvent {
  id: string;
  accountId: string;
  event: string;
  /** The `data` of the delivered `{event, data}` body. */
  data: unknown;
  createdAt: string;
}

export interface EventOutbox {
  /** Appends one event; returns its id. Call it on the repositories of a `store.transaction`. */
  append(accountId: string, event: string, data: unknown): Promise<string>;
}
