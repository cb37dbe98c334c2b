-- One request in flight per card series (INTERFACE §12.3): a merchant-initiated payment names the
-- latest approved authorization of its card's series (Clearhaus series[previous][id]), so two
-- payments of one card sent at once would both name the same one, and the later is no longer the
-- latest. The operation that may be on the wire for the series holds it, claimed in the commit that
-- records its request (acquirer_requests) and released in the commit of its answer. A claim older
-- than the acquirer's timeout and a grace belongs to a sender that stopped: it may be taken over.
ALTER TABLE payment_methods ADD COLUMN series_claimed_by TEXT;
ALTER TABLE payment_methods ADD COLUMN series_claimed_at TEXT;
