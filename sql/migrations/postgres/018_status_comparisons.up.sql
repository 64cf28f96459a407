-- Migration 018 writes SQLite's state tests of its triggers and partial
-- indexes as comparisons instead of IN lists, which SQLite evaluates anew
-- for every row a write changes. PostgreSQL evaluate an IN list once per
-- statement: nothing changes here, and the version only keeps the
-- dialects' numbering together.
SELECT 1;
