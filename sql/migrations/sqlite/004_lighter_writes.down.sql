DROP INDEX jobs_live_key_id;
CREATE INDEX jobs_live_key_id ON jobs (job_key, id)
    WHERE status NOT IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED');
