-- Nothing to revert (see 022_live_key_comparisons.up.sql).
SELECT 1;
