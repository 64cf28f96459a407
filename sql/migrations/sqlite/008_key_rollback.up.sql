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
ALTER TABLE jobs ADD COLUMN key_position INTEGER;
ALTER TABLE jobs ADD COLUMN rollback_type TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN rollback_job_id INTEGER;
ALTER TABLE jobs ADD COLUMN rollback_of INTEGER;

-- The failed jobs whose rollback job is yet to be created: the lease holder
-- reads them every round, and each blocks the later jobs of its key.
-- job_rollback_pending_match repeats this WHERE term as written, so that
-- SQLite uses the index.
CREATE INDEX jobs_rollback_pending ON jobs (job_key, id)
    WHERE status = 'FAILED' AND rollback <> '' AND rollback_job_id IS NULL;
