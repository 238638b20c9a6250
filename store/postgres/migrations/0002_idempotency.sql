-- Version 2: answers remembered for Idempotency-Keys. (scope, key) is the
-- primary key: one record per client key in the whole store, whichever
-- node wrote it. scope is "partner.<partnerID>" or "ip.<address>"; key is
-- the client's, visible ASCII. Expired rows are as good as absent and are
-- swept oldest expiry first (the index on expires_ns).
CREATE TABLE idempotency (
	scope       text COLLATE "C" NOT NULL,
	key         text COLLATE "C" NOT NULL,
	fingerprint bytea NOT NULL CHECK (length(fingerprint) = 32),
	status      integer NOT NULL,
	body        bytea,
	request_id  text NOT NULL,
	created_ns  bigint NOT NULL,
	expires_ns  bigint NOT NULL,
	PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_expiry ON idempotency (expires_ns);
