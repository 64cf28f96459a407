-- Migration 027 indexes PostgreSQL's live jobs past the queue by status
-- and node alone. Nothing changes here: the version only keeps the
-- dialects' numbering together.
SELECT 1;
