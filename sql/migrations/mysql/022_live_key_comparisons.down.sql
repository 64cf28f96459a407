-- Nothing to revert (see 023_live_key_comparisons.up.sql).
SELECT 1;
