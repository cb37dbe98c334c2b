-- Multi-links (INTERFACE §11.3; PostgreSQL: timestamps timestamptz, money BIGINT): a reusable
-- link; every visit starts a new CIT session from the link's settings. A setting left out is NULL
-- (the session takes it from the point of sale's hostedConfiguration when it starts; redirect and
-- notification URLs are never inherited). The same tables and constraints, by the same names, are
-- in sqlite/014_multi_links.sql; integer columns already refuse non-integers, the CHECKs add ranges.
CREATE TABLE multi_links (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  point_of_sale_id TEXT NOT NULL REFERENCES points_of_sale (id),
  state TEXT NOT NULL,
  amount BIGINT NOT NULL,
  currency TEXT NOT NULL,
  reference TEXT,
  sca_mode TEXT,
  timeout_minutes INTEGER,
  instant_capture TEXT,
  text_on_statement TEXT,
  -- JSON object of strings.
  attributes TEXT,
  report_failure INTEGER,
  report_expired INTEGER,
  dynamic_amount INTEGER,
  notification_url TEXT,
  success_url TEXT,
  failure_url TEXT,
  retry_url TEXT,
  return_url TEXT,
  -- JSON array of payment method types; NULL: all.
  allowed_payment_methods TEXT,
  age_minimum INTEGER,
  age_country TEXT,
  -- The subscription each started session asks for (NULL type: none).
  subscription_type TEXT,
  subscription_amount BIGINT,
  subscription_expiry_date TEXT,
  subscription_interval_period TEXT,
  subscription_interval_frequency INTEGER,
  billing_plan_id TEXT,
  billing_next_charge_at TEXT,
  -- Effect key of the idempotent request that created it (see 010_idempotency_effects).
  idempotency_key TEXT,
  state_changed_at TIMESTAMPTZ NOT NULL,
  created_at TIMESTAMPTZ NOT NULL,
  updated_at TIMESTAMPTZ NOT NULL,
  CONSTRAINT multi_links_state_check CHECK (state IN ('ACTIVE', 'DEACTIVATED')),
  CONSTRAINT multi_links_amount_check CHECK (amount BETWEEN 0 AND 999999999),
  CONSTRAINT multi_links_currency_check CHECK (currency ~ '^[A-Z]{3}$'),
  CONSTRAINT multi_links_sca_mode_check CHECK (sca_mode IN ('SKIP', 'NORMAL', 'FORCE')),
  CONSTRAINT multi_links_timeout_minutes_check CHECK (timeout_minutes BETWEEN 1 AND 120),
  CONSTRAINT multi_links_instant_capture_check CHECK (instant_capture IN ('OFF', 'VOID', 'NO_VOID')),
  CONSTRAINT multi_links_report_failure_check CHECK (report_failure IN (0, 1)),
  CONSTRAINT multi_links_report_expired_check CHECK (report_expired IN (0, 1)),
  CONSTRAINT multi_links_dynamic_amount_check CHECK (dynamic_amount IN (0, 1)),
  CONSTRAINT multi_links_age_minimum_check CHECK (age_minimum BETWEEN 0 AND 99),
  CONSTRAINT multi_links_age_country_check CHECK (age_country IN ('DK')),
  CONSTRAINT multi_links_subscription_type_check CHECK (subscription_type IN ('SCHEDULED', 'UNSCHEDULED')),
  CONSTRAINT multi_links_subscription_amount_check CHECK (subscription_amount BETWEEN 0 AND 999999999),
  CONSTRAINT multi_links_subscription_interval_period_check CHECK (subscription_interval_period IN ('DAY', 'WEEK', 'MONTH', 'YEAR')),
  CONSTRAINT multi_links_subscription_interval_frequency_check CHECK (subscription_interval_frequency BETWEEN 1 AND 31)
);
CREATE INDEX multi_links_page ON multi_links (account_id, created_at, id);
CREATE INDEX multi_links_point_of_sale ON multi_links (account_id, point_of_sale_id, created_at, id);
CREATE UNIQUE INDEX multi_links_idempotency_key ON multi_links (account_id, idempotency_key) WHERE idempotency_key IS NOT NULL;

-- The link's order lines, in order (position from 0), copied to every session it starts.
CREATE TABLE multi_link_order_lines (
  multi_link_id TEXT NOT NULL REFERENCES multi_links (id),
  position INTEGER NOT NULL,
  description TEXT NOT NULL,
  image_url TEXT,
  quantity BIGINT NOT NULL,
  unit_price BIGINT NOT NULL,
  total_amount BIGINT NOT NULL,
  type TEXT NOT NULL,
  PRIMARY KEY (multi_link_id, position),
  CONSTRAINT multi_link_order_lines_position_check CHECK (position BETWEEN 0 AND 999),
  CONSTRAINT multi_link_order_lines_quantity_check CHECK (quantity BETWEEN 0 AND 999999999),
  CONSTRAINT multi_link_order_lines_unit_price_check CHECK (unit_price BETWEEN 0 AND 200000000),
  CONSTRAINT multi_link_order_lines_total_amount_check CHECK (total_amount BETWEEN 0 AND 200000000),
  CONSTRAINT multi_link_order_lines_type_check CHECK (
    type IN ('PHYSICAL', 'DISCOUNT', 'SHIPPING_FEE', 'SALES_TAX', 'DIGITAL', 'GIFT_CARD', 'STORE_CREDIT', 'SURCHARGE', 'OTHER')
  )
);

-- A session started by a multi-link carries a copy of its order lines (JSON array), shown in the
-- payment window. NULL for every other session.
ALTER TABLE sessions ADD COLUMN order_lines TEXT;
