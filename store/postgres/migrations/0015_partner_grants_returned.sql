-- Version 15: what a node gives back of a block, kept beside the grants.
-- A row now records what one acquire granted and what its requester gave
-- back of its previous block of that window (a give-back alone is a row
-- that grants nothing); a window has granted sum(granted) - sum(returned).
-- Before, given-back admissions lived only in the grain's memory, so that
-- a later activation counted every block ever handed out: a node whose
-- blocks' leases ended again and again left the next activation a window
-- spent on paper, and it refused the partner until the window's reset.
ALTER TABLE partner_grants ADD COLUMN returned integer NOT NULL DEFAULT 0;
ALTER TABLE partner_grants DROP CONSTRAINT partner_grants_granted_check;
ALTER TABLE partner_grants ADD CONSTRAINT partner_grants_amounts_check
	CHECK (granted >= 0 AND returned >= 0 AND granted + returned > 0);
