-- The value CHECKs of the tables a payment writes become domains: one per checked column, named
-- <table>_<column>, whose constraint keeps the CHECK's name and expression (a refused value names
-- the same constraint: `value for domain transactions_amount violates check constraint
-- "transactions_amount_check"`). Same rules, checked when a value is assigned to the column.
--
-- Why: PostgreSQL 15 re-reads and plans every CHECK of a table for each statement that writes to it
-- (ExecRelCheck: stringToNode + expression_planner per constraint, per statement, prepared or
-- not), and re-checks all of them on every UPDATE. `transactions` has 17: a prepared single-row
-- insert and update of it (pgbench, one client) took 0.80 ms with the CHECKs, 0.52 ms with these
-- domains, 0.49 ms with no constraint at all; one CHECK combining all 17 took 0.76–0.84 ms. A
-- domain's check is planned once per backend (the type cache), and only for assigned columns.
-- Multi-row inserts cast their rows' values to the base types (bulk-insert.ts): a domain coerced in
-- each row of a VALUES list is set up per row.
--
-- ALTER COLUMN ... TYPE to a domain with a constraint rewrites the table (checking every row) and
-- rebuilds its indexes, under an exclusive lock: expect a pause on a large `transactions`.
-- transactions
CREATE DOMAIN transactions_amount AS bigint CONSTRAINT transactions_amount_check CHECK ((VALUE >= 0) AND (VALUE <= 999999999));
CREATE DOMAIN transactions_authorized_amount AS bigint CONSTRAINT transactions_authorized_amount_check CHECK ((VALUE >= 0) AND (VALUE <= 999999999));
CREATE DOMAIN transactions_captured_amount AS bigint CONSTRAINT transactions_captured_amount_check CHECK ((VALUE >= 0) AND (VALUE <= 999999999));
CREATE DOMAIN transactions_currency AS text CONSTRAINT transactions_currency_check CHECK (VALUE ~ '^[A-Z]{3}$'::text);
CREATE DOMAIN transactions_effects AS text CONSTRAINT transactions_effects_check CHECK ((VALUE IS NULL) OR (VALUE = ANY (ARRAY['SESSION'::text, 'BILLING_CHARGE'::text, 'TERMINAL_SALE'::text])));
CREATE DOMAIN transactions_fee AS bigint CONSTRAINT transactions_fee_check CHECK ((VALUE >= 0) AND (VALUE <= 999999999));
CREATE DOMAIN transactions_flow AS text CONSTRAINT transactions_flow_check CHECK (VALUE = ANY (ARRAY['MIT'::text, 'CIT'::text, 'MOTO'::text, 'SALE'::text, 'PAYOUT'::text]));
CREATE DOMAIN transactions_instant_capture AS text CONSTRAINT transactions_instant_capture_check CHECK (VALUE = ANY (ARRAY['OFF'::text, 'VOID'::text, 'NO_VOID'::text]));
CREATE DOMAIN transactions_paid_out_amount AS bigint CONSTRAINT transactions_paid_out_amount_check CHECK ((VALUE >= 0) AND (VALUE <= 999999999));
CREATE DOMAIN transactions_payment_method_type AS text CONSTRAINT transactions_payment_method_type_check CHECK (VALUE = ANY (ARRAY['CARD'::text, 'VIPPS_MOBILEPAY'::text, 'MOBILEPAY_ONLINE'::text, 'APPLE_PAY'::text, 'GOOGLE_PAY'::text, 'SWISH'::text, 'VIABILL'::text, 'ANYDAY'::text, 'KLARNA'::text]));
CREATE DOMAIN transactions_pending_amount AS bigint CONSTRAINT transactions_pending_amount_check CHECK ((VALUE >= 0) AND (VALUE <= 999999999));
CREATE DOMAIN transactions_pending_refund_amount AS bigint CONSTRAINT transactions_pending_refund_amount_check CHECK ((VALUE >= 0) AND (VALUE <= 999999999));
CREATE DOMAIN transactions_refunded_amount AS bigint CONSTRAINT transactions_refunded_amount_check CHECK ((VALUE >= 0) AND (VALUE <= 999999999));
CREATE DOMAIN transactions_sca_mode AS text CONSTRAINT transactions_sca_mode_check CHECK (VALUE = ANY (ARRAY['SKIP'::text, 'NORMAL'::text, 'FORCE'::text]));
CREATE DOMAIN transactions_state AS text CONSTRAINT transactions_state_check CHECK (VALUE = ANY (ARRAY['PENDING'::text, 'PROCESSING'::text, 'SUCCESS'::text, 'FAILED'::text]));
CREATE DOMAIN transactions_type AS text CONSTRAINT transactions_type_check CHECK (VALUE = ANY (ARRAY['PAYMENT'::text, 'PAYOUT'::text, 'MOTO'::text]));
CREATE DOMAIN transactions_voided_amount AS bigint CONSTRAINT transactions_voided_amount_check CHECK ((VALUE >= 0) AND (VALUE <= 999999999));
ALTER TABLE transactions DROP CONSTRAINT transactions_amount_check, DROP CONSTRAINT transactions_authorized_amount_check, DROP CONSTRAINT transactions_captured_amount_check, DROP CONSTRAINT transactions_currency_check, DROP CONSTRAINT transactions_effects_check, DROP CONSTRAINT transactions_fee_check, DROP CONSTRAINT transactions_flow_check, DROP CONSTRAINT transactions_instant_capture_check, DROP CONSTRAINT transactions_paid_out_amount_check, DROP CONSTRAINT transactions_payment_method_type_check, DROP CONSTRAINT transactions_pending_amount_check, DROP CONSTRAINT transactions_pending_refund_amount_check, DROP CONSTRAINT transactions_refunded_amount_check, DROP CONSTRAINT transactions_sca_mode_check, DROP CONSTRAINT transactions_state_check, DROP CONSTRAINT transactions_type_check, DROP CONSTRAINT transactions_voided_amount_check,
  ALTER COLUMN amount TYPE transactions_amount,
  ALTER COLUMN authorized_amount TYPE transactions_authorized_amount,
  ALTER COLUMN captured_amount TYPE transactions_captured_amount,
  ALTER COLUMN currency TYPE transactions_currency,
  ALTER COLUMN effects TYPE transactions_effects,
  ALTER COLUMN fee TYPE transactions_fee,
  ALTER COLUMN flow TYPE transactions_flow,
  ALTER COLUMN instant_capture TYPE transactions_instant_capture,
  ALTER COLUMN paid_out_amount TYPE transactions_paid_out_amount,
  ALTER COLUMN payment_method_type TYPE transactions_payment_method_type,
  ALTER COLUMN pending_amount TYPE transactions_pending_amount,
  ALTER COLUMN pending_refund_amount TYPE transactions_pending_refund_amount,
  ALTER COLUMN refunded_amount TYPE transactions_refunded_amount,
  ALTER COLUMN sca_mode TYPE transactions_sca_mode,
  ALTER COLUMN state TYPE transactions_state,
  ALTER COLUMN type TYPE transactions_type,
  ALTER COLUMN voided_amount TYPE transactions_voided_amount;

-- operations
CREATE DOMAIN operations_amount AS bigint CONSTRAINT operations_amount_check CHECK ((VALUE >= 0) AND (VALUE <= 999999999));
CREATE DOMAIN operations_chain AS text CONSTRAINT operations_chain_check CHECK ((VALUE IS NULL) OR (VALUE = ANY (ARRAY['INSTANT_CAPTURE'::text, 'VOID_REMAINING'::text])));
CREATE DOMAIN operations_state AS text CONSTRAINT operations_state_check CHECK (VALUE = ANY (ARRAY['PROCESSING'::text, 'SUCCESS'::text, 'FAILED'::text]));
CREATE DOMAIN operations_type AS text CONSTRAINT operations_type_check CHECK (VALUE = ANY (ARRAY['AUTHORIZATION'::text, 'SALE'::text, 'CAPTURE'::text, 'REFUND'::text, 'VOID'::text, 'RENEW'::text, 'PAYOUT'::text]));
ALTER TABLE operations DROP CONSTRAINT operations_amount_check, DROP CONSTRAINT operations_chain_check, DROP CONSTRAINT operations_state_check, DROP CONSTRAINT operations_type_check,
  ALTER COLUMN amount TYPE operations_amount,
  ALTER COLUMN chain TYPE operations_chain,
  ALTER COLUMN state TYPE operations_state,
  ALTER COLUMN type TYPE operations_type;

-- jobs
CREATE DOMAIN jobs_attempts AS integer CONSTRAINT jobs_attempts_check CHECK ((VALUE >= 0) AND (VALUE <= 999999999));
CREATE DOMAIN jobs_max_attempts AS integer CONSTRAINT jobs_max_attempts_check CHECK ((VALUE >= 1) AND (VALUE <= 999999999));
CREATE DOMAIN jobs_state AS text CONSTRAINT jobs_state_check CHECK (VALUE = ANY (ARRAY['queued'::text, 'running'::text, 'done'::text, 'dead'::text]));
ALTER TABLE jobs DROP CONSTRAINT jobs_attempts_check, DROP CONSTRAINT jobs_max_attempts_check, DROP CONSTRAINT jobs_state_check,
  ALTER COLUMN attempts TYPE jobs_attempts,
  ALTER COLUMN max_attempts TYPE jobs_max_attempts,
  ALTER COLUMN state TYPE jobs_state;

-- notifications
CREATE DOMAIN notifications_attempts AS integer CONSTRAINT notifications_attempts_check CHECK ((VALUE >= 0) AND (VALUE <= 999999999));
CREATE DOMAIN notifications_last_status AS integer CONSTRAINT notifications_last_status_check CHECK ((VALUE >= 100) AND (VALUE <= 999));
CREATE DOMAIN notifications_state AS text CONSTRAINT notifications_state_check CHECK (VALUE = ANY (ARRAY['PENDING'::text, 'DELIVERED'::text, 'FAILED'::text]));
ALTER TABLE notifications DROP CONSTRAINT notifications_attempts_check, DROP CONSTRAINT notifications_last_status_check, DROP CONSTRAINT notifications_state_check,
  ALTER COLUMN attempts TYPE notifications_attempts,
  ALTER COLUMN last_status TYPE notifications_last_status,
  ALTER COLUMN state TYPE notifications_state;

-- notification_attempts
CREATE DOMAIN notification_attempts_attempt AS integer CONSTRAINT notification_attempts_attempt_check CHECK ((VALUE >= 1) AND (VALUE <= 999999999));
CREATE DOMAIN notification_attempts_duration_ms AS integer CONSTRAINT notification_attempts_duration_ms_check CHECK ((VALUE >= 0) AND (VALUE <= 999999999));
CREATE DOMAIN notification_attempts_status_code AS integer CONSTRAINT notification_attempts_status_code_check CHECK ((VALUE >= 100) AND (VALUE <= 999));
ALTER TABLE notification_attempts DROP CONSTRAINT notification_attempts_attempt_check, DROP CONSTRAINT notification_attempts_duration_ms_check, DROP CONSTRAINT notification_attempts_status_code_check,
  ALTER COLUMN attempt TYPE notification_attempts_attempt,
  ALTER COLUMN duration_ms TYPE notification_attempts_duration_ms,
  ALTER COLUMN status_code TYPE notification_attempts_status_code;

-- idempotency_keys
CREATE DOMAIN idempotency_keys_response_status AS integer CONSTRAINT idempotency_keys_response_status_check CHECK ((VALUE >= 100) AND (VALUE <= 599));
CREATE DOMAIN idempotency_keys_state AS text CONSTRAINT idempotency_keys_state_check CHECK (VALUE = ANY (ARRAY['in_flight'::text, 'completed'::text]));
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_response_status_check, DROP CONSTRAINT idempotency_keys_state_check,
  ALTER COLUMN response_status TYPE idempotency_keys_response_status,
  ALTER COLUMN state TYPE idempotency_keys_state;

-- ingestion_counters
CREATE DOMAIN ingestion_counters_channel AS text CONSTRAINT ingestion_counters_channel_check CHECK (VALUE = ANY (ARRAY['mit'::text, 'mit_batch'::text]));
CREATE DOMAIN ingestion_counters_count AS integer CONSTRAINT ingestion_counters_count_check CHECK (VALUE >= 0);
ALTER TABLE ingestion_counters DROP CONSTRAINT ingestion_counters_channel_check, DROP CONSTRAINT ingestion_counters_count_check,
  ALTER COLUMN channel TYPE ingestion_counters_channel,
  ALTER COLUMN count TYPE ingestion_counters_count;
