-- CIT sessions, the fields of INTERFACE §11.2 (issue 11 part 2). Every new column is added in
-- place (ALTER TABLE ... ADD COLUMN with a column CHECK, as 017 does): no rebuild, so every
-- existing column (order_lines of 014 included) stays as it is. The same constraints, by the same
-- names, are in postgres/018_cit_sessions.sql. Booleans are 0/1 integers, as report_failure.

-- Payment method types the window offers (JSON array of paymentMethodType); NULL: all.
ALTER TABLE sessions ADD COLUMN allowed_payment_methods TEXT;
-- The customer may enter the amount in the window (`amount` is the default and, once paid, what was paid).
ALTER TABLE sessions ADD COLUMN dynamic_amount INTEGER NOT NULL DEFAULT 0 CONSTRAINT sessions_dynamic_amount_check CHECK (dynamic_amount IN (0, 1));
-- Age verification asked by the merchant (NULL: none) and the customer's verified result.
ALTER TABLE sessions ADD COLUMN minimum_age INTEGER CONSTRAINT sessions_minimum_age_check CHECK (minimum_age IS NULL OR (typeof(minimum_age) = 'integer' AND minimum_age BETWEEN 0 AND 99));
ALTER TABLE sessions ADD COLUMN age_verification_country TEXT CONSTRAINT sessions_age_verification_country_check CHECK (age_verification_country IS NULL OR (typeof(age_verification_country) = 'text' AND age_verification_country GLOB '[A-Z][A-Z]'));
ALTER TABLE sessions ADD COLUMN age_verified INTEGER NOT NULL DEFAULT 0 CONSTRAINT sessions_age_verified_check CHECK (age_verified IN (0, 1));
-- The merchant's pre-authorization hook and the customer's redirects after a failed attempt / a cancelled redirect method.
ALTER TABLE sessions ADD COLUMN pre_auth_url TEXT;
ALTER TABLE sessions ADD COLUMN retry_url TEXT;
ALTER TABLE sessions ADD COLUMN return_url TEXT;
-- A NotificationWebhook with session.state EXPIRED goes to notification_url when the session expires.
ALTER TABLE sessions ADD COLUMN report_expired INTEGER NOT NULL DEFAULT 0 CONSTRAINT sessions_report_expired_check CHECK (report_expired IN (0, 1));
