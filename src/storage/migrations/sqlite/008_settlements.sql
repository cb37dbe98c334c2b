-- Settlements: one transfer per (merchant, currency) and settlement run, one settlement
-- transaction per settled operation (CAPTURE, SALE, REFUND, PAYOUT). Money in INTEGER minor
-- units; the wire shows decimal strings.
--
-- A transfer is OPEN while a run fills it (invisible to the merchant) and READY once complete.
-- Every commit that adds settlement transactions adds their sums to the transfer's totals in the
-- same database transaction, so the totals equal the transactions at every commit; a crashed run
-- leaves an OPEN transfer that the next run continues and completes.
CREATE TABLE settlement_transfers (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  currency TEXT NOT NULL,
  state TEXT NOT NULL,
  acquirer TEXT NOT NULL,
  settlement_name TEXT NOT NULL,
  settlement_ids TEXT NOT NULL,
  posting_date TEXT NOT NULL,
  acquirer_reference TEXT NOT NULL,
  transactions_count INTEGER NOT NULL DEFAULT 0,
  gross_amount INTEGER NOT NULL DEFAULT 0,
  acquirer_fee_amount INTEGER NOT NULL DEFAULT 0,
  interchange_fee_amount INTEGER NOT NULL DEFAULT 0,
  scheme_fee_amount INTEGER NOT NULL DEFAULT 0,
  transactions_net_amount INTEGER NOT NULL DEFAULT 0,
  -- Transfer-level adjustments (FEE, RESERVE, ADJUSTMENT), JSON, set at completion.
  adjustments TEXT NOT NULL DEFAULT '[]',
  net_amount INTEGER NOT NULL DEFAULT 0,
  opened_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  -- The moment it became READY (visible): cursor order of the merchant's list.
  created_at TEXT
);
-- At most one OPEN transfer per merchant and currency: concurrent runs fill the same one.
CREATE UNIQUE INDEX settlement_transfers_open ON settlement_transfers (account_id, currency) WHERE state = 'OPEN';
CREATE INDEX settlement_transfers_page ON settlement_transfers (account_id, created_at, id) WHERE state = 'READY';

CREATE TABLE settlement_transactions (
  id TEXT PRIMARY KEY,
  settlement_transfer_id TEXT NOT NULL REFERENCES settlement_transfers (id),
  account_id TEXT NOT NULL REFERENCES accounts (id),
  -- Exactly once: the claim of an operation is this row's insert.
  operation_id TEXT NOT NULL UNIQUE REFERENCES operations (id),
  operation_type TEXT NOT NULL,
  transaction_id TEXT NOT NULL REFERENCES transactions (id),
  agreement_id TEXT NOT NULL,
  merchant_reference TEXT,
  acquirer_reference TEXT,
  posting_date TEXT NOT NULL,
  currency TEXT NOT NULL,
  gross_amount INTEGER NOT NULL,
  acquirer_fee INTEGER NOT NULL,
  interchange_fee INTEGER NOT NULL,
  scheme_fee INTEGER NOT NULL,
  net_amount INTEGER NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX settlement_transactions_page ON settlement_transactions (settlement_transfer_id, created_at, id);

-- The engine's scan: a merchant's successful money-moving operations in finalization order.
CREATE INDEX operations_settleable ON operations (account_id, finalized_at, id)
  WHERE state = 'SUCCESS' AND type IN ('CAPTURE', 'SALE', 'REFUND', 'PAYOUT');
