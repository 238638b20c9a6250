-- Version 20: a tracked swap is found by its quote id (GET /v1/status?
-- quoteId=), read from the swap's record, so that no column is written
-- twice; swaps tracked before this version are indexed too.
CREATE INDEX swaps_by_quote ON swaps ((record->>'quoteId'));
