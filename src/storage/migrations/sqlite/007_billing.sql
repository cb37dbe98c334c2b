-- Subscription billing (embedded SQLite): plans, agreements and their charges.
-- Timestamps RFC 3339 UTC text (fixed width: text order is time order), money INTEGER minor units, desired_date YYYY-MM-DD.

CREATE TABLE billing_plans (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  name TEXT NOT NULL,
  amount INTEGER NOT NULL,
  currency TEXT NOT NULL,
  max_attempts INTEGER NOT NULL,
  interval_period TEXT NOT NULL,
  interval_frequency INTEGER NOT NULL,
  instant_capture TEXT NOT NULL,
  color TEXT,
  emoji TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX billing_plans_page ON billing_plans (account_id, created_at, id);

CREATE TABLE billing_agreements (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  billing_plan_id TEXT NOT NULL REFERENCES billing_plans (id),
  -- NULL while the agreement is PENDING on a CIT session that has not completed.
  subscription_id TEXT,
  session_id TEXT,
  customer_id TEXT,
  state TEXT NOT NULL,
  next_charge_at TEXT,
  last_charge_at TEXT,
  desired_date TEXT,
  reference TEXT,
  state_changed_at TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX billing_agreements_page ON billing_agreements (account_id, created_at, id);
CREATE INDEX billing_agreements_session ON billing_agreements (session_id) WHERE session_id IS NOT NULL;

CREATE TABLE billing_agreement_charges (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  billing_agreement_id TEXT NOT NULL REFERENCES billing_agreements (id),
  billing_plan_id TEXT NOT NULL,
  period_start TEXT NOT NULL,
  state TEXT NOT NULL,
  amount INTEGER NOT NULL,
  currency TEXT NOT NULL,
  max_attempts INTEGER NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  transaction_id TEXT,
  deadline_at TEXT NOT NULL,
  next_attempt_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  finalized_at TEXT
);
-- Exactly one charge per agreement period, whatever the number of workers racing for it.
CREATE UNIQUE INDEX billing_charges_one_per_period ON billing_agreement_charges (billing_agreement_id, period_start);
CREATE INDEX billing_charges_page ON billing_agreement_charges (account_id, created_at, id);
CREATE INDEX billing_charges_agreement ON billing_agreement_charges (account_id, billing_agreement_id, created_at, id);
