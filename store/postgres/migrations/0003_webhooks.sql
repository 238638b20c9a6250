-- Version 3: webhook registrations. The signing secret is kept only
-- sealed (AES-256-GCM under a key derived from the data directory's
-- secrets.key, bound to the row's partner and webhook IDs): the database,
-- its WAL and its backups hold no secret in clear.
CREATE TABLE webhooks (
	id            text COLLATE "C" PRIMARY KEY,
	partner_id    text COLLATE "C" NOT NULL,
	url           text NOT NULL,
	-- NULL keeps a nil list apart from an empty one.
	events        text[],
	active        boolean NOT NULL,
	sealed_secret bytea NOT NULL,
	created_ns    bigint NOT NULL,
	updated_ns    bigint NOT NULL
);
CREATE INDEX webhooks_partner ON webhooks (partner_id, created_ns, id);
