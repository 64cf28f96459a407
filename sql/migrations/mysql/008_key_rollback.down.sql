ALTER TABLE jobs DROP INDEX jobs_rollback_pending, DROP COLUMN rollback_pending_key;
ALTER TABLE jobs DROP COLUMN key_position, DROP COLUMN rollback_type, DROP COLUMN rollback_job_id,
    DROP COLUMN rollback_of;
