-- Version 1: the store's own facts, partners with their API key digests,
-- and fee wallets.
--
-- Identifiers are compared byte by byte (COLLATE "C"), as the Pebble store
-- orders its keys, whatever the database's default collation. Times are
-- Unix nanoseconds (bigint): Go's times round-trip exactly, where
-- timestamptz would keep microseconds.

-- meta holds single facts about the store: "secret_key_check", the check
-- value of the data directory's secrets.key that sealed the webhook
-- secrets, so that a node opened with another key, or none, is refused.
CREATE TABLE meta (
	key   text COLLATE "C" PRIMARY KEY,
	value bytea NOT NULL
);

-- partners: one row per partner account. key_digest is the SHA-256 of its
-- current API key (the key itself is never stored), unique so that one key
-- finds one partner.
CREATE TABLE partners (
	id                 text COLLATE "C" PRIMARY KEY,
	name               text NOT NULL,
	email              text NOT NULL,
	swap_fee_bps       integer NOT NULL,
	onramp_fee_bps     integer NOT NULL,
	heavy_per_min      integer NOT NULL,
	read_per_min       integer NOT NULL,
	-- NULL keeps a nil list apart from an empty one, as the Pebble
	-- record's JSON does.
	enabled_ecosystems text[],
	key_digest         bytea NOT NULL CHECK (length(key_digest) = 32),
	disabled           boolean NOT NULL,
	webhooks_enabled   boolean NOT NULL,
	created_ns         bigint NOT NULL,
	updated_ns         bigint NOT NULL,
	CONSTRAINT partners_key_digest_key UNIQUE (key_digest)
);

-- fee_wallets: at most one payout address per partner and settlement
-- ecosystem.
CREATE TABLE fee_wallets (
	partner_id text COLLATE "C" NOT NULL,
	ecosystem  text COLLATE "C" NOT NULL,
	address    text NOT NULL,
	created_ns bigint NOT NULL,
	updated_ns bigint NOT NULL,
	PRIMARY KEY (partner_id, ecosystem)
);
