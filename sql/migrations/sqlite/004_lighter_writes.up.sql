-- Keyless jobs, nearly all of them, need no entry in the index of live
-- keys: job_live_key_match looks up keyed jobs only, and repeats this WHERE
-- term as written so that SQLite still uses the index. Without them a
-- job's insert and start each touch one index fewer.
DROP INDEX jobs_live_key_id;
CREATE INDEX jobs_live_key_id ON jobs (job_key, id)
    WHERE job_key <> '' AND status NOT IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED');
