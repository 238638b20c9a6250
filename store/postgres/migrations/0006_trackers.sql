-- Version 6: what the trackers follow. Each record is its domain value's
-- JSON; open marks one a tracker resumes after a start (a swap still due a
-- poll, an on-ramp order or a multi-step deposit not in a terminal
-- state), which the partial indexes serve.

-- swaps: tracked swaps by source transaction hash in lower case.
CREATE TABLE swaps (
	id     text COLLATE "C" PRIMARY KEY,
	open   boolean NOT NULL,
	record jsonb NOT NULL
);
CREATE INDEX swaps_open ON swaps (id) WHERE open;

-- deposit_swaps: the tracked swap of an intents deposit, by its target
-- (memo empty in SIMPLE mode); the latest swap tracked for a target wins.
CREATE TABLE deposit_swaps (
	address text COLLATE "C" NOT NULL,
	memo    text COLLATE "C" NOT NULL,
	swap_id text COLLATE "C" NOT NULL,
	PRIMARY KEY (address, memo)
);

-- onramp_orders: on-ramp orders by uid, with their state history; the
-- partner's line is in activity (kind onramp).
CREATE TABLE onramp_orders (
	uid    text COLLATE "C" PRIMARY KEY,
	open   boolean NOT NULL,
	record jsonb NOT NULL
);
CREATE INDEX onramp_orders_open ON onramp_orders (uid) WHERE open;

-- inbound_deposits: registered multi-step deposits by their step-1
-- transaction hash in lower case.
CREATE TABLE inbound_deposits (
	tx_hash text COLLATE "C" PRIMARY KEY,
	open    boolean NOT NULL,
	record  jsonb NOT NULL
);
CREATE INDEX inbound_deposits_open ON inbound_deposits (tx_hash) WHERE open;
