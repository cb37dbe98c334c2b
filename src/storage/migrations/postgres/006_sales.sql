-- In-person sales on card terminals (src/modules/sales).
--
-- A terminal serves one unfinished sale at a time. The database enforces it: a second PENDING or
-- PROCESSING sale on the same terminal violates this index, so two concurrent sales can never both
-- take one terminal (the loser is recorded as FAILED TERMINAL_BUSY). The terminal frees itself the
-- moment its sale reaches a final state, whoever finalizes it (tap pipeline, abort, expiry).
CREATE UNIQUE INDEX transactions_terminal_busy ON transactions (terminal_id) WHERE flow = 'SALE' AND state IN ('PENDING', 'PROCESSING');

-- The terminal side of a sale: which step the device is at. Tap, abort and expiry race for the
-- same sale; each claims it with a conditional update on `stage` (only one wins).
--   QUEUED → WAITING_FOR_CARD → CARD_PRESENTED → COMPLETED, or WAITING_FOR_CARD → ABORTED | EXPIRED
CREATE TABLE terminal_sales (
  transaction_id TEXT PRIMARY KEY REFERENCES transactions (id),
  account_id TEXT NOT NULL REFERENCES accounts (id),
  terminal_id TEXT NOT NULL REFERENCES terminals (id),
  stage TEXT NOT NULL,
  dispatched_at TIMESTAMPTZ,
  expires_at TIMESTAMPTZ,
  card_presented_at TIMESTAMPTZ,
  ended_at TIMESTAMPTZ,
  created_at TIMESTAMPTZ NOT NULL,
  updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX terminal_sales_terminal ON terminal_sales (terminal_id, stage, created_at);
