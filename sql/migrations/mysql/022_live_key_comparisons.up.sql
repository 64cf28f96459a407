-- Migration 022 writes the state tests of SQLite's index of live keys and
-- of its trigger for late results as comparisons instead of IN lists,
-- which SQLite evaluates anew for every row a write changes. MySQL and
-- MariaDB evaluate an IN list once per statement: nothing changes here,
-- and the version only keeps the dialects' numbering together.
SELECT 1;
