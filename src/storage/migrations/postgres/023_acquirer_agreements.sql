-- Acquirer agreements (INTERFACE §12.1; PostgreSQL: timestamps timestamptz): which acquirer moves
-- an account's card money, with the merchant's API key there sealed with the vault key (AES-256-GCM,
-- src/security/secret-box.ts; never in clear), its MCC and its default text on statement. Rows are
-- append-only: a PUT writes a new row and sets removed_at on the previous current one in the same
-- commit (the account row locked first, so that two PUTs of one account follow each other), a
-- DELETE sets removed_at; no row is deleted or changed otherwise, so a transaction keeps the row
-- that authorized it (its captures and refunds go to the same acquirer with the same key after a
-- PUT or DELETE). created_at is when the account's agreement was first created (carried from row to
-- row by PUTs), updated_at when the row was written. At most one current row (removed_at NULL) per
-- account. The same table, with the same constraint names, is in sqlite/023_acquirer_agreements.sql.
-- Plain CHECKs, not domains (022_checks_as_domains): the table is written by an operator's PUT, not by payments.
CREATE TABLE acquirer_agreements (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  acquirer TEXT NOT NULL,
  api_key_sealed TEXT,
  mcc TEXT NOT NULL,
  text_on_statement TEXT,
  created_at TIMESTAMPTZ NOT NULL,
  updated_at TIMESTAMPTZ NOT NULL,
  removed_at TIMESTAMPTZ,
  CONSTRAINT acquirer_agreements_acquirer_check CHECK (acquirer IN ('sandbox', 'clearhaus')),
  CONSTRAINT acquirer_agreements_api_key_sealed_check CHECK (
    (acquirer = 'sandbox' AND api_key_sealed IS NULL) OR (acquirer = 'clearhaus' AND api_key_sealed IS NOT NULL)
  ),
  CONSTRAINT acquirer_agreements_mcc_check CHECK (mcc ~ '^[0-9]{4}$'),
  CONSTRAINT acquirer_agreements_text_on_statement_check CHECK (text_on_statement ~ '^[ -~]{2,22}$')
);
-- The account's current agreement: at most one, found by this index.
CREATE UNIQUE INDEX acquirer_agreements_current ON acquirer_agreements (account_id) WHERE removed_at IS NULL;
