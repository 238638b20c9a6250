-- Version 17: the transfers on-chain settlement runs plan (payouts), one
-- row per transfer: its JSON (account.Transfer, as the Pebble store keeps
-- it) and the columns a listing selects on. A transfer's earnings leave the
-- pending set (activity.pending_ecosystem) when it is planned, and return
-- to it when it fails.
CREATE TABLE payouts (
	id         text COLLATE "C" PRIMARY KEY,
	ecosystem  text COLLATE "C" NOT NULL,
	state      text COLLATE "C" NOT NULL,
	created_ns bigint NOT NULL,
	record     jsonb NOT NULL
);
CREATE INDEX payouts_listing ON payouts (ecosystem, state, created_ns, id);
