-- Migration 020 writes SQLite's CHECK of jobs.status as comparisons instead
-- of an IN list, which SQLite evaluates anew for every row a write changes.
-- Nothing changes here; the version only keeps the dialects' numbering
-- together.
SELECT 1;
