-- Version 18: a partner's swaps by wallet. A line of activity that became a
-- swap names its sender's and receiver's wallets in from_wallet and
-- to_wallet (account.WalletKey: a 0x-hex address in lower case, any other
-- as written), set with its status by the swap's transitions; the line's
-- record takes the addresses and the swap's transactions (fromAddress,
-- toAddress, sendingTxHash, receivingTxHash) as the Pebble store writes
-- them. A wallet's history (GET /v1/partner/transactions?wallet=) is
-- "partner_id = $1 AND (from_wallet = $2 OR to_wallet = $2)": the two
-- partial indexes, led by the partner, answer it as a BitmapOr of two
-- index lookups, never a read of the partner's whole history. Columns with
-- an index each, rather than one array with GIN, keep the partner in the
-- key (GIN needs btree_gin for that) and the lookups plain equality. Lines
-- of quotes never executed keep both NULL, so the partial indexes cost the
-- quote path's inserts nothing.
ALTER TABLE activity ADD COLUMN from_wallet text COLLATE "C", ADD COLUMN to_wallet text COLLATE "C";
CREATE INDEX activity_from_wallet ON activity (partner_id, from_wallet) WHERE from_wallet IS NOT NULL;
CREATE INDEX activity_to_wallet ON activity (partner_id, to_wallet) WHERE to_wallet IS NOT NULL;

-- The lines of swaps tracked before this version take their swap's
-- wallets and transactions as a transition would write them now.
UPDATE activity AS a SET
	record = (a.record::jsonb || jsonb_strip_nulls(jsonb_build_object(
		'status', s.record->>'status',
		'fromAddress', NULLIF(s.record->>'fromAddress', ''),
		'toAddress', NULLIF(s.record->>'toAddress', ''),
		'sendingTxHash', NULLIF(s.record->'sending'->>'txHash', ''),
		'receivingTxHash', NULLIF(s.record->'receiving'->>'txHash', ''))))::json,
	from_wallet = CASE WHEN s.record->>'fromAddress' ~ '^0[xX][0-9a-fA-F]+$' THEN lower(s.record->>'fromAddress')
		ELSE NULLIF(s.record->>'fromAddress', '') END,
	to_wallet = CASE WHEN s.record->>'toAddress' ~ '^0[xX][0-9a-fA-F]+$' THEN lower(s.record->>'toAddress')
		ELSE NULLIF(s.record->>'toAddress', '') END
FROM swaps AS s
WHERE a.partner_id = s.record->>'partnerId' AND a.id = s.record->>'quoteId' AND a.record->>'kind' = 'swap';
