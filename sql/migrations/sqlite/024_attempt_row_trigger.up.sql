-- Migration 024 makes PostgreSQL's trigger that records attempts one that
-- runs for a row only when the row calls for a record. SQLite has
-- row-level triggers alone, and these have such a WHEN already: nothing
-- changes, and the version only keeps the dialects' numbering together.
SELECT 1;
