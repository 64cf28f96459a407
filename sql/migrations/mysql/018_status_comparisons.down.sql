-- Nothing to revert (see 018_status_comparisons.up.sql).
SELECT 1;
