-- Version 11: the partner portal's sign-in. Codes and sessions are kept by
-- digest only: a login code's SHA-256 (bound to its address), a session's
-- SHA-256 of the cookie's id, so that a copy of the database signs nobody
-- in.

-- portal_codes: the latest login code sent to an address (lower-cased).
CREATE TABLE portal_codes (
	email      text COLLATE "C" PRIMARY KEY,
	partner_id text COLLATE "C" NOT NULL,
	digest     bytea NOT NULL CHECK (length(digest) = 32),
	issued_ns  bigint NOT NULL,
	expires_ns bigint NOT NULL,
	tries      integer NOT NULL,
	used       boolean NOT NULL
);

-- portal_sessions: one row per signed-in browser.
CREATE TABLE portal_sessions (
	id_digest       text COLLATE "C" PRIMARY KEY,
	partner_id      text COLLATE "C" NOT NULL,
	csrf            text NOT NULL,
	key_fingerprint text NOT NULL,
	created_ns      bigint NOT NULL,
	last_seen_ns    bigint NOT NULL
);
CREATE INDEX portal_sessions_partner ON portal_sessions (partner_id);

-- portal_key_rotations: when a partner's API key was last rotated.
CREATE TABLE portal_key_rotations (
	partner_id text COLLATE "C" PRIMARY KEY,
	rotated_ns bigint NOT NULL
);
