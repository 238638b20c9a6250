-- Version 16: the transaction manager's state. Each intent's record is
-- its domain value's JSON (txintent.Intent with its signed transactions);
-- version is its compare-and-set counter; open marks an intent a manager
-- reads at start: not final, or final with its completion hooks not yet
-- run.
CREATE TABLE tx_intents (
	id       text COLLATE "C" PRIMARY KEY,
	key      text COLLATE "C" NOT NULL UNIQUE,
	purpose  text COLLATE "C" NOT NULL,
	chain_id bigint NOT NULL,
	state    text COLLATE "C" NOT NULL,
	open     boolean NOT NULL,
	version  bigint NOT NULL,
	record   jsonb NOT NULL
);
CREATE INDEX tx_intents_open ON tx_intents (id) WHERE open;

-- tx_nonces: an account's next nonce per chain, raised in the transaction
-- that stores the intent holding a nonce (account in lower case).
CREATE TABLE tx_nonces (
	chain_id bigint NOT NULL,
	account  text COLLATE "C" NOT NULL,
	next     bigint NOT NULL,
	PRIMARY KEY (chain_id, account)
);

-- operator_keys: the operator's signing key by name, sealed with the data
-- directory's secrets.key as webhook secrets are; every node of a cluster
-- shares the key file, so every node can open it.
CREATE TABLE operator_keys (
	name   text COLLATE "C" PRIMARY KEY,
	sealed bytea NOT NULL
);
