-- Version 19 is the browsers' migration, written on another branch; this
-- step only holds its number so that version 20 follows without a gap.
-- The browsers' own 0019 replaces this file when both are merged.
SELECT 1;
