-- Migration 025 moves PostgreSQL's notification of updated jobs from a
-- trigger into the update statements. Nothing here notifies: the version
-- only keeps the dialects' numbering together.
SELECT 1;
