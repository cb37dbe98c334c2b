-- Issue 11, parts 6–8 (INTERFACE §11.6–§11.8).

-- §11.8 ingestion caps: MIT transactions accepted per merchant per minute of the service clock,
-- per channel ('mit': POST /mit, 'mit_batch': POST /mit/batch entries). One row per (merchant,
-- channel, minute), moved by a conditional upsert in the commit that writes the accepted
-- transactions: a request that would pass the cap rolls back with that commit and changes nothing.
CREATE TABLE ingestion_counters (
  account_id TEXT NOT NULL REFERENCES accounts (id),
  channel TEXT NOT NULL,
  window_start TEXT NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY (account_id, channel, window_start),
  CONSTRAINT ingestion_counters_channel_check CHECK (channel IN ('mit', 'mit_batch')),
  CONSTRAINT ingestion_counters_count_check CHECK (typeof(count) = 'integer' AND count >= 0)
);

-- §11.6 the terminal request of a sale: stored with the terminal side of the sale.
ALTER TABLE terminal_sales ADD COLUMN suppress_app_notifications INTEGER NOT NULL DEFAULT 0
  CONSTRAINT terminal_sales_suppress_app_notifications_check CHECK (suppress_app_notifications IN (0, 1));
ALTER TABLE terminal_sales ADD COLUMN switch_back_timeout INTEGER
  CONSTRAINT terminal_sales_switch_back_timeout_check
  CHECK (switch_back_timeout IS NULL OR (typeof(switch_back_timeout) = 'integer' AND switch_back_timeout BETWEEN 0 AND 2147483647));
ALTER TABLE terminal_sales ADD COLUMN activity_to_resume TEXT
  CONSTRAINT terminal_sales_activity_to_resume_check CHECK (activity_to_resume IS NULL OR length(activity_to_resume) <= 255);
ALTER TABLE terminal_sales ADD COLUMN surcharge INTEGER
  CONSTRAINT terminal_sales_surcharge_check CHECK (surcharge IS NULL OR surcharge IN (0, 1));
ALTER TABLE terminal_sales ADD COLUMN dcc INTEGER
  CONSTRAINT terminal_sales_dcc_check CHECK (dcc IS NULL OR dcc IN (0, 1));

-- §11.6 GET /terminals?deviceId=
CREATE INDEX terminals_device ON terminals (account_id, device_id);

-- §11.7 desired_date becomes the day of the month (1–31) monthly charges aim for; null for plans
-- that are not monthly. It was a YYYY-MM-DD anchor: its day is kept for MONTH plans.
ALTER TABLE billing_agreements ADD COLUMN desired_day INTEGER
  CONSTRAINT billing_agreements_desired_date_check CHECK (desired_day IS NULL OR (typeof(desired_day) = 'integer' AND desired_day BETWEEN 1 AND 31));
UPDATE billing_agreements SET desired_day = CAST(substr(desired_date, 9, 2) AS INTEGER)
WHERE desired_date IS NOT NULL
  AND billing_plan_id IN (SELECT id FROM billing_plans WHERE interval_period = 'MONTH');
ALTER TABLE billing_agreements DROP COLUMN desired_date;
ALTER TABLE billing_agreements RENAME COLUMN desired_day TO desired_date;
