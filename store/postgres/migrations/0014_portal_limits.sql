-- Version 14: the partner portal's sign-in counters, in the database that
-- every node of a cluster shares, so that the limits on code requests and
-- code checks hold for the cluster as a whole rather than per node. A key
-- is a digest of what is counted (an address, a client IP), never the
-- address or IP itself.
CREATE TABLE portal_limits (
	key      text COLLATE "C" PRIMARY KEY,
	start_ns bigint NOT NULL,
	n        integer NOT NULL
);
CREATE INDEX portal_limits_start ON portal_limits (start_ns);
