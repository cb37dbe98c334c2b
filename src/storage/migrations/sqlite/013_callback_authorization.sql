-- The callback's Authorization value (the point of sale's webhookAuthentication, still sealed) is
-- kept with its delivery row, written in the commit that made the transaction final: delivering a
-- callback then reads its own row and nothing else.
ALTER TABLE notifications ADD COLUMN authorization_sealed TEXT;
