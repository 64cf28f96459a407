-- The live key of a keyless job is NULL too: job_live_key_match looks up
-- keyed jobs only, as on the other backends.
ALTER TABLE jobs DROP INDEX jobs_live_key_id, DROP COLUMN live_key;
ALTER TABLE jobs
    ADD COLUMN live_key VARCHAR(255) AS (CASE WHEN job_key <> '' AND status NOT IN ('FINISHED', 'WARNING', 'FAILED',
        'CANCELLED', 'DELETED') THEN job_key END) VIRTUAL,
    ADD INDEX jobs_live_key_id (live_key, id);
