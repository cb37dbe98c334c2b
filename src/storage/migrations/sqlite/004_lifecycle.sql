-- Lifecycle operations (capture, refund, void, renew) and the event outbox.
--
-- Reservations: an operation in PROCESSING holds its amount so that concurrent requests cannot
-- over-commit the authorization or the captured funds. Conditional updates keep
--   captured_amount + voided_amount + pending_amount <= authorized_amount   (captures and voids)
--   refunded_amount + pending_refund_amount <= captured_amount               (refunds)
-- pending_amount (001) holds the captures and voids in flight; refunds get their own column so
-- that a refund in flight does not shrink what may still be captured.
ALTER TABLE transactions ADD COLUMN pending_refund_amount INTEGER NOT NULL DEFAULT 0;

-- PROCESSING operations are found by the resolver job and by the refund allocation.
CREATE INDEX operations_transaction_type ON operations (transaction_id, type, state);

-- Transactional outbox of domain events (transaction.captured.v1, ...): appended in the same
-- database transaction as the change it reports. Delivery (webhook fan-out) reads from here.
CREATE TABLE events (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  event TEXT NOT NULL,
  data TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX events_created ON events (created_at, id);
CREATE INDEX events_account ON events (account_id, created_at, id);
