-- Version 11: partners' hourly usage, the edge's rate-limit counts that
-- every node flushes every few seconds. One row per partner, bucket
-- ('heavy' or 'read') and hour (its start, Unix seconds, UTC); a flush
-- adds its counts to the row (INSERT … ON CONFLICT DO UPDATE adding),
-- never overwrites them, so that nodes sharing the database sum.
CREATE TABLE partner_usage (
	partner_id text COLLATE "C" NOT NULL,
	hour       bigint NOT NULL,
	bucket     text COLLATE "C" NOT NULL CHECK (bucket IN ('heavy', 'read')),
	admitted   bigint NOT NULL CHECK (admitted >= 0),
	refused    bigint NOT NULL CHECK (refused >= 0),
	PRIMARY KEY (partner_id, hour, bucket)
);
