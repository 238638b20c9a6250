-- Version 18 is the wallet history's migration, written on another branch;
-- this step only holds its number so that version 19 follows without a gap.
-- The wallet history's own 0018 replaces this file when both are merged.
SELECT 1;
