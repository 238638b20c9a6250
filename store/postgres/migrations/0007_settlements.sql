-- Version 7: settlement batches, one row per settlement run that paid
-- something (the batch's JSON, its skipped partners left out: they are
-- reported, not kept), and an index to read one ecosystem's fee wallets.
CREATE TABLE settlements (
	ecosystem text COLLATE "C" NOT NULL,
	id        text COLLATE "C" NOT NULL,
	record    jsonb NOT NULL,
	PRIMARY KEY (ecosystem, id)
);
CREATE INDEX fee_wallets_ecosystem ON fee_wallets (ecosystem, partner_id);
