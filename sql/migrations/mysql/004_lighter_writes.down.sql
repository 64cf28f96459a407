ALTER TABLE jobs DROP INDEX jobs_live_key_id, DROP COLUMN live_key;
ALTER TABLE jobs
    ADD COLUMN live_key VARCHAR(255) AS (CASE WHEN status NOT IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED',
        'DELETED') THEN job_key END) VIRTUAL,
    ADD INDEX jobs_live_key_id (live_key, id);
