-- Version 10: claims on Idempotency-Keys, so that processes sharing the
-- store let one request per key act at a time across all of them. A claim
-- names the node acting (owner, random per opened store) and lapses at
-- until (the database's clock), so that a node that died acting does not
-- hold its keys for ever.
CREATE TABLE idempotency_claims (
	scope text COLLATE "C" NOT NULL,
	key   text COLLATE "C" NOT NULL,
	owner text COLLATE "C" NOT NULL,
	until timestamptz NOT NULL,
	PRIMARY KEY (scope, key)
);
