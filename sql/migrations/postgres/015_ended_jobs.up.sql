-- Ended jobs found by when they ended, so a prune costs each batch its own
-- size however long the table's history. Without it a purge read every
-- ended job in id order and sorted them per batch. Only ended jobs are in
-- it: a job gets its one entry with its final write, and no transition
-- before that touches it. The purge queries repeat this WHERE term as
-- written (job_purge_filter).
CREATE INDEX jobs_ended ON jobs (finished_at, id)
    WHERE status IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED');
