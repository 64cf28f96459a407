-- Migration 021 moves PostgreSQL's notification of inserted jobs from a
-- trigger into the insert statements. Nothing here notifies: the version
-- only keeps the dialects' numbering together.
SELECT 1;
