-- Dispatch stays fast however many ended jobs the table holds.

-- The key check of job_list_dispatchable looks for another job of the same
-- key that has not ended. Only live jobs are in this index, so a key with a
-- long history (a nightly job's) costs nothing per queued job; through
-- jobs_key_id every ended job of the key was read for each one. SQLite uses
-- a partial index only for a query that repeats its WHERE term as written,
-- which job_list_dispatchable does.
CREATE INDEX jobs_live_key_id ON jobs (job_key, id)
    WHERE status NOT IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED');
