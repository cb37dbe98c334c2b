-- Payment links live up to 86,400 minutes (60 days, INTERFACE §11.2), which is also their default;
-- the sessions they start were held to 43,200.
ALTER TABLE sessions
  DROP CONSTRAINT sessions_timeout_minutes_check,
  ADD CONSTRAINT sessions_timeout_minutes_check CHECK (timeout_minutes BETWEEN 1 AND 86400);
