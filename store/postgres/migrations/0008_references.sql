-- Version 8: the small indexes of references.
--
-- quote_refs: the id of a multi-step quote by its reference (keccak256 of
-- the id), which is all its step-1 transaction carries; kept after the
-- quote's ticket is gone (a deposit can be registered later).
CREATE TABLE quote_refs (
	ref      bytea PRIMARY KEY CHECK (length(ref) = 32),
	quote_id text COLLATE "C" NOT NULL
);

-- sandbox_deliveries: the transaction hash of a sandbox delivery (a
-- bridge's destination side, a refund, a step-2 payment) by the reference
-- of what it delivered, so that a repeated poll never delivers twice.
CREATE TABLE sandbox_deliveries (
	ref     text COLLATE "C" PRIMARY KEY,
	tx_hash text NOT NULL
);

-- chain_ops: the operations applied to each sandbox chain, in order, as
-- the sandbox network encodes them (the store reads nothing in them), which
-- is everything needed to rebuild the chain; never deleted. Sequence
-- numbers are unsigned 64-bit, stored as their two's complement and read
-- back the same way (a chain will not reach 2^63 operations).
CREATE TABLE chain_ops (
	chain_id bigint NOT NULL,
	seq      bigint NOT NULL,
	record   bytea NOT NULL,
	PRIMARY KEY (chain_id, seq)
);
