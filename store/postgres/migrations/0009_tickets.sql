-- Version 9: issued quotes' tickets, for processes that share them (the
-- Pebble store keeps them in the data directory's ticket log). record is
-- the ticket's encoding as the ticket log writes it; issued_ns the issue
-- time the quote id carries, by which tickets are swept once expired;
-- deposit_address and deposit_memo an intents quote's deposit target
-- (memo empty in SIMPLE mode), by which a deposit finds its quote.
CREATE TABLE tickets (
	id              text COLLATE "C" PRIMARY KEY,
	issued_ns       bigint NOT NULL,
	deposit_address text COLLATE "C",
	deposit_memo    text COLLATE "C",
	record          bytea NOT NULL
);
CREATE INDEX tickets_issued ON tickets (issued_ns);
CREATE INDEX tickets_deposit ON tickets (deposit_address, deposit_memo, issued_ns) WHERE deposit_address IS NOT NULL;
