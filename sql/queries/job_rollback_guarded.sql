-- Records the rollback job of a failed job. It applies only while the job
-- is still FAILED at the version read and has no rollback job, so of two
-- lease holders creating the rollback one wins and the other's transaction
-- rolls its insert back.
UPDATE jobs SET
    rollback_job_id = :rollback_job_id,
    version         = version + 1
WHERE id = :id AND status = 'FAILED' AND version = :version AND rollback_job_id IS NULL
