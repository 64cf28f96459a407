-- Migration 026 leaves room on PostgreSQL's pages of jobs for the versions
-- its updates write. Nothing changes here: the version only keeps the
-- dialects' numbering together.
SELECT 1;
