-- Version 4: partners' activity, and the ledger inside it. One row per
-- partner quote (and, as they are tracked, the swap or on-ramp order it
-- became), keyed as the Pebble store keys it: partner, creation time, id.
-- record is the activity's JSON encoding, its fields and its encoding
-- version "v" (the same bytes the Pebble store writes, kept as they are:
-- json, not jsonb, whose parsing would cost every partner quote's insert
-- about a third more); a quote that carried a partner fee holds its ledger
-- row there ("earning").
--
-- While an earning is pending settlement, pending_ecosystem names the
-- ecosystem it settles in and ledger_seq its place in (about) commit order,
-- which the partial index serves to a settlement run; both are cleared when
-- it settles.
CREATE SEQUENCE ledger_seq;
CREATE TABLE activity (
	partner_id        text COLLATE "C" NOT NULL,
	created_ns        bigint NOT NULL,
	id                text COLLATE "C" NOT NULL,
	record            json NOT NULL,
	pending_ecosystem text COLLATE "C",
	ledger_seq        bigint,
	PRIMARY KEY (partner_id, created_ns, id)
);
CREATE INDEX activity_pending ON activity (pending_ecosystem, ledger_seq) WHERE pending_ecosystem IS NOT NULL;
