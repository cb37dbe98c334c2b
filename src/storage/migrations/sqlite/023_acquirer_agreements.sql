-- Acquirer agreements (INTERFACE §12.1): which acquirer moves an account's card money, with the
-- merchant's API key there sealed with the vault key (AES-256-GCM, src/security/secret-box.ts; never
-- in clear), its MCC and its default text on statement. Rows are append-only: a PUT writes a new row
-- and sets removed_at on the previous current one in the same commit, a DELETE sets removed_at; no
-- row is deleted or changed otherwise, so a transaction keeps the row that authorized it (its
-- captures and refunds go to the same acquirer with the same key after a PUT or DELETE).
-- created_at is when the account's agreement was first created (carried from row to row by PUTs),
-- updated_at when the row was written. At most one current row (removed_at NULL) per account.
-- The same table, with the same constraint names, is in postgres/023_acquirer_agreements.sql.
CREATE TABLE acquirer_agreements (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  acquirer TEXT NOT NULL,
  api_key_sealed TEXT,
  mcc TEXT NOT NULL,
  text_on_statement TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  removed_at TEXT,
  CONSTRAINT acquirer_agreements_acquirer_check CHECK (acquirer IN ('sandbox', 'clearhaus')),
  CONSTRAINT acquirer_agreements_api_key_sealed_check CHECK (
    (acquirer = 'sandbox' AND api_key_sealed IS NULL) OR (acquirer = 'clearhaus' AND typeof(api_key_sealed) = 'text')
  ),
  CONSTRAINT acquirer_agreements_mcc_check CHECK (typeof(mcc) = 'text' AND mcc GLOB '[0-9][0-9][0-9][0-9]'),
  CONSTRAINT acquirer_agreements_text_on_statement_check CHECK (
    text_on_statement IS NULL
    OR (typeof(text_on_statement) = 'text' AND length(text_on_statement) BETWEEN 2 AND 22 AND text_on_statement NOT GLOB '*[^ -~]*')
  )
);
-- The account's current agreement: at most one, found by this index.
CREATE UNIQUE INDEX acquirer_agreements_current ON acquirer_agreements (account_id) WHERE removed_at IS NULL;
