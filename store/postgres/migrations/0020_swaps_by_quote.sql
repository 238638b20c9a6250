-- Version 20: GET /v1/status by quote id and by a transaction broadcast
-- without execute.
--
-- A tracked swap is found by its quote id, read from the swap's record, so
-- that no column is written twice; swaps tracked before this version are
-- indexed too.
CREATE INDEX swaps_by_quote ON swaps ((record->>'quoteId'));

-- quote_calls: the id of a quote with an EVM transaction (other than a
-- multi-step one, whose call reference is in quote_refs) by keccak256 of
-- its calldata, with its issue time in Unix seconds, so that the entries
-- are swept as the quotes' tickets go (--quote-retention).
CREATE TABLE quote_calls (
	ref      bytea PRIMARY KEY CHECK (length(ref) = 32),
	quote_id text COLLATE "C" NOT NULL,
	issued_s bigint NOT NULL
);
CREATE INDEX quote_calls_issued ON quote_calls (issued_s);
