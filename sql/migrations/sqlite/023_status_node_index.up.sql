-- Migration 023 merges PostgreSQL's partial indexes of live jobs by status
-- and by node into one. This backend keeps its own indexes: nothing
-- changes here, and the version only keeps the dialects' numbering
-- together.
SELECT 1;
