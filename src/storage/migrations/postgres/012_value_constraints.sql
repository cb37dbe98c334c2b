-- The database refuses bad values by itself (issue 9): every money, count and attempt column in its
-- range, every currency three upper-case letters, every state one of its states. BIGINT and
-- INTEGER already refuse non-integers, 'Infinity' and NaN; these CHECKs add the ranges. The same
-- constraints, by the same names, are in sqlite/012_value_constraints.sql (see there for the ranges).
--
-- ADD CONSTRAINT fails on an existing bad row naming only the constraint: before this file runs,
-- the runner lists the violating rows with table, key, column and value (src/storage/constraint-report.ts)
-- and stops; no row is ever dropped or altered.

ALTER TABLE accounts
  ADD CONSTRAINT accounts_status_check CHECK (status IN ('PENDING', 'ACTIVE', 'CLOSED')),
  ADD CONSTRAINT accounts_currency_code_check CHECK (currency_code ~ '^[A-Z]{3}$'),
  ADD CONSTRAINT accounts_cap_moto_check CHECK (cap_moto IN (0, 1)),
  ADD CONSTRAINT accounts_cap_sync_payout_check CHECK (cap_sync_payout IN (0, 1));

ALTER TABLE credentials
  ADD CONSTRAINT credentials_kind_check CHECK (kind IN ('access_token', 'api_key')),
  ADD CONSTRAINT credentials_environment_check CHECK (environment IN ('test', 'live'));

ALTER TABLE points_of_sale
  ADD CONSTRAINT points_of_sale_type_check CHECK (type IN ('ONLINE', 'PHYSICAL'));

ALTER TABLE terminals
  ADD CONSTRAINT terminals_fallback_check CHECK (fallback IN (0, 1));

ALTER TABLE transactions
  ADD CONSTRAINT transactions_type_check CHECK (type IN ('PAYMENT', 'PAYOUT', 'MOTO')),
  ADD CONSTRAINT transactions_flow_check CHECK (flow IN ('MIT', 'CIT', 'MOTO', 'SALE', 'PAYOUT')),
  ADD CONSTRAINT transactions_state_check CHECK (state IN ('PENDING', 'PROCESSING', 'SUCCESS', 'FAILED')),
  ADD CONSTRAINT transactions_sca_mode_check CHECK (sca_mode IN ('SKIP', 'NORMAL', 'FORCE')),
  ADD CONSTRAINT transactions_instant_capture_check CHECK (instant_capture IN ('OFF', 'VOID', 'NO_VOID')),
  ADD CONSTRAINT transactions_payment_method_type_check CHECK (payment_method_type IN ('CARD', 'VIPPS_MOBILEPAY', 'MOBILEPAY_ONLINE', 'APPLE_PAY', 'GOOGLE_PAY', 'SWISH', 'VIABILL', 'ANYDAY', 'KLARNA')),
  ADD CONSTRAINT transactions_amount_check CHECK (amount BETWEEN 0 AND 999999999),
  ADD CONSTRAINT transactions_fee_check CHECK (fee BETWEEN 0 AND 999999999),
  ADD CONSTRAINT transactions_currency_check CHECK (currency ~ '^[A-Z]{3}$'),
  ADD CONSTRAINT transactions_authorized_amount_check CHECK (authorized_amount BETWEEN 0 AND 999999999),
  ADD CONSTRAINT transactions_captured_amount_check CHECK (captured_amount BETWEEN 0 AND 999999999),
  ADD CONSTRAINT transactions_refunded_amount_check CHECK (refunded_amount BETWEEN 0 AND 999999999),
  ADD CONSTRAINT transactions_voided_amount_check CHECK (voided_amount BETWEEN 0 AND 999999999),
  ADD CONSTRAINT transactions_paid_out_amount_check CHECK (paid_out_amount BETWEEN 0 AND 999999999),
  ADD CONSTRAINT transactions_pending_amount_check CHECK (pending_amount BETWEEN 0 AND 999999999),
  ADD CONSTRAINT transactions_pending_refund_amount_check CHECK (pending_refund_amount BETWEEN 0 AND 999999999);

ALTER TABLE operations
  ADD CONSTRAINT operations_type_check CHECK (type IN ('AUTHORIZATION', 'SALE', 'CAPTURE', 'REFUND', 'VOID', 'RENEW', 'PAYOUT')),
  ADD CONSTRAINT operations_state_check CHECK (state IN ('PROCESSING', 'SUCCESS', 'FAILED')),
  ADD CONSTRAINT operations_amount_check CHECK (amount BETWEEN 0 AND 999999999);

ALTER TABLE idempotency_keys
  ADD CONSTRAINT idempotency_keys_state_check CHECK (state IN ('in_flight', 'completed')),
  ADD CONSTRAINT idempotency_keys_response_status_check CHECK (response_status BETWEEN 100 AND 599);

ALTER TABLE jobs
  ADD CONSTRAINT jobs_state_check CHECK (state IN ('queued', 'running', 'done', 'dead')),
  ADD CONSTRAINT jobs_attempts_check CHECK (attempts BETWEEN 0 AND 999999999),
  ADD CONSTRAINT jobs_max_attempts_check CHECK (max_attempts BETWEEN 1 AND 999999999);

ALTER TABLE payment_methods
  ADD CONSTRAINT payment_methods_type_check CHECK (type IN ('CARD', 'VIPPS_MOBILEPAY', 'MOBILEPAY_ONLINE', 'APPLE_PAY', 'GOOGLE_PAY', 'SWISH', 'VIABILL', 'ANYDAY', 'KLARNA'));

ALTER TABLE notifications
  ADD CONSTRAINT notifications_state_check CHECK (state IN ('PENDING', 'DELIVERED', 'FAILED')),
  ADD CONSTRAINT notifications_attempts_check CHECK (attempts BETWEEN 0 AND 999999999),
  ADD CONSTRAINT notifications_last_status_check CHECK (last_status BETWEEN 100 AND 999);

ALTER TABLE notification_attempts
  ADD CONSTRAINT notification_attempts_attempt_check CHECK (attempt BETWEEN 1 AND 999999999),
  ADD CONSTRAINT notification_attempts_status_code_check CHECK (status_code BETWEEN 100 AND 999),
  ADD CONSTRAINT notification_attempts_duration_ms_check CHECK (duration_ms BETWEEN 0 AND 999999999);

ALTER TABLE sessions
  ADD CONSTRAINT sessions_state_check CHECK (state IN ('PENDING', 'PROCESSING', 'COMPLETED', 'EXPIRED')),
  ADD CONSTRAINT sessions_amount_check CHECK (amount BETWEEN 0 AND 999999999),
  ADD CONSTRAINT sessions_currency_check CHECK (currency ~ '^[A-Z]{3}$'),
  ADD CONSTRAINT sessions_sca_mode_check CHECK (sca_mode IN ('SKIP', 'NORMAL', 'FORCE')),
  ADD CONSTRAINT sessions_timeout_minutes_check CHECK (timeout_minutes BETWEEN 1 AND 43200),
  ADD CONSTRAINT sessions_instant_capture_check CHECK (instant_capture IN ('OFF', 'VOID', 'NO_VOID')),
  ADD CONSTRAINT sessions_max_attempts_check CHECK (max_attempts BETWEEN 1 AND 10),
  ADD CONSTRAINT sessions_attempts_check CHECK (attempts BETWEEN 0 AND 999999999),
  ADD CONSTRAINT sessions_report_failure_check CHECK (report_failure IN (0, 1));

ALTER TABLE subscriptions
  ADD CONSTRAINT subscriptions_currency_check CHECK (currency ~ '^[A-Z]{3}$'),
  ADD CONSTRAINT subscriptions_state_check CHECK (state IN ('PENDING', 'ACTIVE', 'INVALID', 'DISABLED')),
  ADD CONSTRAINT subscriptions_type_check CHECK (type IN ('SCHEDULED', 'UNSCHEDULED')),
  ADD CONSTRAINT subscriptions_interval_period_check CHECK (interval_period IN ('DAY', 'WEEK', 'MONTH', 'YEAR')),
  ADD CONSTRAINT subscriptions_interval_frequency_check CHECK (interval_frequency BETWEEN 1 AND 31),
  ADD CONSTRAINT subscriptions_amount_check CHECK (amount BETWEEN 1 AND 999999999);

ALTER TABLE webhooks
  ADD CONSTRAINT webhooks_pause_reason_check CHECK (pause_reason IN ('ERROR_RATE_TOO_HIGH', 'PAUSED_BY_MERCHANT'));

ALTER TABLE webhook_deliveries
  ADD CONSTRAINT webhook_deliveries_state_check CHECK (state IN ('PENDING', 'DELIVERED', 'FAILED', 'CANCELLED')),
  ADD CONSTRAINT webhook_deliveries_attempts_check CHECK (attempts BETWEEN 0 AND 999999999);

ALTER TABLE webhook_delivery_attempts
  ADD CONSTRAINT webhook_delivery_attempts_attempt_check CHECK (attempt BETWEEN 1 AND 999999999),
  ADD CONSTRAINT webhook_delivery_attempts_success_check CHECK (success IN (0, 1)),
  ADD CONSTRAINT webhook_delivery_attempts_http_status_check CHECK (http_status BETWEEN 100 AND 999),
  ADD CONSTRAINT webhook_delivery_attempts_duration_ms_check CHECK (duration_ms BETWEEN 0 AND 999999999);

ALTER TABLE webhook_event_fanouts
  ADD CONSTRAINT webhook_event_fanouts_deliveries_check CHECK (deliveries BETWEEN 0 AND 999999999);

ALTER TABLE terminal_sales
  ADD CONSTRAINT terminal_sales_stage_check CHECK (stage IN ('QUEUED', 'WAITING_FOR_CARD', 'CARD_PRESENTED', 'COMPLETED', 'ABORTED', 'EXPIRED'));

ALTER TABLE billing_plans
  ADD CONSTRAINT billing_plans_amount_check CHECK (amount BETWEEN 1 AND 999999999),
  ADD CONSTRAINT billing_plans_currency_check CHECK (currency ~ '^[A-Z]{3}$'),
  ADD CONSTRAINT billing_plans_max_attempts_check CHECK (max_attempts BETWEEN 1 AND 31),
  ADD CONSTRAINT billing_plans_interval_period_check CHECK (interval_period IN ('DAY', 'WEEK', 'MONTH', 'YEAR')),
  ADD CONSTRAINT billing_plans_interval_frequency_check CHECK (interval_frequency BETWEEN 1 AND 31),
  ADD CONSTRAINT billing_plans_instant_capture_check CHECK (instant_capture IN ('OFF', 'VOID', 'NO_VOID'));

ALTER TABLE billing_agreements
  ADD CONSTRAINT billing_agreements_state_check CHECK (state IN ('PENDING', 'ACTIVE', 'STOPPED'));

ALTER TABLE billing_agreement_charges
  ADD CONSTRAINT billing_agreement_charges_state_check CHECK (state IN ('PROCESSING', 'SUCCESS', 'FAILED')),
  ADD CONSTRAINT billing_agreement_charges_amount_check CHECK (amount BETWEEN 1 AND 999999999),
  ADD CONSTRAINT billing_agreement_charges_currency_check CHECK (currency ~ '^[A-Z]{3}$'),
  ADD CONSTRAINT billing_agreement_charges_max_attempts_check CHECK (max_attempts BETWEEN 1 AND 31),
  ADD CONSTRAINT billing_agreement_charges_attempts_check CHECK (attempts BETWEEN 0 AND 999999999);

ALTER TABLE settlement_transfers
  ADD CONSTRAINT settlement_transfers_currency_check CHECK (currency ~ '^[A-Z]{3}$'),
  ADD CONSTRAINT settlement_transfers_state_check CHECK (state IN ('OPEN', 'READY')),
  ADD CONSTRAINT settlement_transfers_transactions_count_check CHECK (transactions_count BETWEEN 0 AND 999999999),
  ADD CONSTRAINT settlement_transfers_gross_amount_check CHECK (gross_amount BETWEEN -9007199254740991 AND 9007199254740991),
  ADD CONSTRAINT settlement_transfers_acquirer_fee_amount_check CHECK (acquirer_fee_amount BETWEEN -9007199254740991 AND 0),
  ADD CONSTRAINT settlement_transfers_interchange_fee_amount_check CHECK (interchange_fee_amount BETWEEN -9007199254740991 AND 0),
  ADD CONSTRAINT settlement_transfers_scheme_fee_amount_check CHECK (scheme_fee_amount BETWEEN -9007199254740991 AND 0),
  ADD CONSTRAINT settlement_transfers_transactions_net_amount_check CHECK (transactions_net_amount = gross_amount + acquirer_fee_amount + interchange_fee_amount + scheme_fee_amount),
  ADD CONSTRAINT settlement_transfers_net_amount_check CHECK (net_amount BETWEEN -9007199254740991 AND 9007199254740991);

ALTER TABLE settlement_transactions
  ADD CONSTRAINT settlement_transactions_operation_type_check CHECK (operation_type IN ('CAPTURE', 'SALE', 'REFUND', 'PAYOUT')),
  ADD CONSTRAINT settlement_transactions_currency_check CHECK (currency ~ '^[A-Z]{3}$'),
  ADD CONSTRAINT settlement_transactions_gross_amount_check CHECK (gross_amount BETWEEN -999999999 AND 999999999),
  ADD CONSTRAINT settlement_transactions_gross_sign_check CHECK ((operation_type IN ('CAPTURE', 'SALE') AND gross_amount >= 0) OR (operation_type IN ('REFUND', 'PAYOUT') AND gross_amount <= 0)),
  ADD CONSTRAINT settlement_transactions_acquirer_fee_check CHECK (acquirer_fee BETWEEN -999999999 AND 0),
  ADD CONSTRAINT settlement_transactions_interchange_fee_check CHECK (interchange_fee BETWEEN -999999999 AND 0),
  ADD CONSTRAINT settlement_transactions_scheme_fee_check CHECK (scheme_fee BETWEEN -999999999 AND 0),
  ADD CONSTRAINT settlement_transactions_net_amount_check CHECK (net_amount = gross_amount + acquirer_fee + interchange_fee + scheme_fee);

ALTER TABLE payment_links
  ADD CONSTRAINT payment_links_state_check CHECK (state IN ('ACTIVE', 'PAID', 'CANCELLED', 'EXPIRED')),
  ADD CONSTRAINT payment_links_amount_check CHECK (amount BETWEEN 0 AND 999999999),
  ADD CONSTRAINT payment_links_currency_check CHECK (currency ~ '^[A-Z]{3}$');
