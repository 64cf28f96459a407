-- Dispatch stays fast however many ended jobs the table holds.

-- The key check of job_list_dispatchable looks for another job of the same
-- key that has not ended. MySQL and MariaDB have no partial index; this
-- virtual column stands in for one: it holds the job's key while the job
-- has not ended and NULL after, so its index finds a key's live jobs
-- without reading its ended ones (through jobs_key_id every ended job of a
-- key was read for each queued job of it). It is computed, never stored or
-- written, and only mysql/job_list_dispatchable.sql reads it.
ALTER TABLE jobs
    ADD COLUMN live_key VARCHAR(255) AS (CASE WHEN status NOT IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED',
        'DELETED') THEN job_key END) VIRTUAL,
    ADD INDEX jobs_live_key_id (live_key, id);
