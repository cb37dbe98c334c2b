-- Registered webhooks (PostgreSQL) (INTERFACE §7, §8): the merchant's subscriptions to outbox events, one
-- delivery per (event, webhook), and every HTTP attempt of a delivery (merchant-visible, and the
-- base of the auto-pause error rate). The events themselves live in the outbox of 004.

CREATE TABLE webhooks (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  url TEXT NOT NULL,
  events TEXT NOT NULL,
  secret_sealed TEXT NOT NULL,
  paused_at TIMESTAMPTZ,
  pause_reason TEXT,
  -- Start of the current error-rate window after a resume (the failures before it are forgiven).
  resumed_at TIMESTAMPTZ,
  created_at TIMESTAMPTZ NOT NULL,
  updated_at TIMESTAMPTZ NOT NULL,
  deleted_at TIMESTAMPTZ
);
CREATE INDEX webhooks_account ON webhooks (account_id, created_at, id) WHERE deleted_at IS NULL;

-- One per (outbox event, webhook): the unique pair makes the fan-out exactly-once.
CREATE TABLE webhook_deliveries (
  id TEXT PRIMARY KEY,
  webhook_id TEXT NOT NULL REFERENCES webhooks (id),
  account_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  event TEXT NOT NULL,
  body TEXT NOT NULL,
  state TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TIMESTAMPTZ,
  last_attempt_at TIMESTAMPTZ,
  created_at TIMESTAMPTZ NOT NULL,
  finished_at TIMESTAMPTZ,
  UNIQUE (event_id, webhook_id)
);
CREATE INDEX webhook_deliveries_page ON webhook_deliveries (webhook_id, created_at, id);
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (webhook_id) WHERE state = 'PENDING';

CREATE TABLE webhook_delivery_attempts (
  id TEXT PRIMARY KEY,
  delivery_id TEXT NOT NULL REFERENCES webhook_deliveries (id),
  webhook_id TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  success INTEGER NOT NULL,
  http_status INTEGER,
  error TEXT,
  duration_ms INTEGER NOT NULL,
  attempted_at TIMESTAMPTZ NOT NULL,
  UNIQUE (delivery_id, attempt)
);
-- The auto-pause window: (webhook, time) range scans.
CREATE INDEX webhook_delivery_attempts_window ON webhook_delivery_attempts (webhook_id, attempted_at);

-- Outbox events already fanned out to webhooks. The outbox (004) is not touched: this table marks
-- progress, and its newest event_created_at bounds the relay's scan (see the repository).
CREATE TABLE webhook_event_fanouts (
  event_id TEXT PRIMARY KEY,
  event_created_at TIMESTAMPTZ NOT NULL,
  deliveries INTEGER NOT NULL DEFAULT 0,
  created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX webhook_event_fanouts_event_created ON webhook_event_fanouts (event_created_at);
