-- Keys ordered by an explicit position, and rollback jobs.
--
-- key_position is a job's place in its key's order; NULL stands for the
-- job's own id, so an insert needs no second write and the multi-row
-- inserts stay as they are. A key runs its jobs by (COALESCE(key_position,
-- id), id): a rollback job takes the position of the job it undoes, so it
-- runs after that job and before every later job of the key.
--
-- rollback_type is the type of the rollback job ('' = the job's own type),
-- rollback_job_id the rollback job created after the job's final failure,
-- rollback_of (on a rollback job) the job it undoes. None has a foreign
-- key: pruning one job leaves the other as it is.
--
-- MySQL has no partial index: the virtual column rollback_pending_key is
-- the key of a failed job whose rollback job is yet to be created ('' for
-- a keyless one) and NULL otherwise, and its index stands in for one. The
-- lease holder reads those jobs every round, and each blocks the later
-- jobs of its key.
ALTER TABLE jobs
    ADD COLUMN key_position    BIGINT       NULL,
    ADD COLUMN rollback_type   VARCHAR(255) NOT NULL DEFAULT '',
    ADD COLUMN rollback_job_id BIGINT       NULL,
    ADD COLUMN rollback_of     BIGINT       NULL;
ALTER TABLE jobs
    ADD COLUMN rollback_pending_key VARCHAR(255) AS (CASE WHEN status = 'FAILED' AND rollback <> ''
        AND rollback_job_id IS NULL THEN job_key END) VIRTUAL,
    ADD INDEX jobs_rollback_pending (rollback_pending_key, id);
