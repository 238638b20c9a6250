-- Version 13: the fence of partners' grains in a cluster. epoch is bumped
-- by every activation of a partner's grain; a grant or a ledger batch
-- carries the epoch its writer holds and is written only while it is still
-- the partner's (compared, under a share lock of this row, in the write's
-- own transaction), so that an activation another one replaced writes
-- nothing more.
CREATE TABLE partner_epochs (
	partner_id text COLLATE "C" PRIMARY KEY,
	epoch      bigint NOT NULL
);

-- The blocks of admissions a partner's grain granted, one row per acquire
-- (request_id, the same for every retry of it), so that a new activation
-- knows what its window granted already. Rows of ended windows are swept.
CREATE TABLE partner_grants (
	partner_id      text COLLATE "C" NOT NULL,
	request_id      text COLLATE "C" NOT NULL,
	bucket          text COLLATE "C" NOT NULL,
	requester       text COLLATE "C" NOT NULL,
	window_start_ns bigint NOT NULL,
	granted         integer NOT NULL CHECK (granted > 0),
	PRIMARY KEY (partner_id, request_id)
);
CREATE INDEX partner_grants_window ON partner_grants (partner_id, window_start_ns);
