-- Job priorities, and the queue as the dispatcher reads it.
--
-- A job's priority orders the queue: the dispatcher takes RESTART jobs
-- first, then the higher priority, then the older job. 50 is the default
-- (engine.DefaultPriority); the range 1 to 100 is checked by the engine.
ALTER TABLE jobs ADD COLUMN priority INT NOT NULL DEFAULT 50;

-- The dispatcher reads each job type's queue apart, in dispatch order, and
-- only the jobs whose load fits the most free room of a node that runs the
-- type (job_list_dispatchable), so a round reads what it can place and
-- never pages through jobs that cannot fit. jobs_queue_load answers, per
-- type, the lightest and heaviest queued load, and jobs_queue the types
-- queued at all, each in a few index steps however long the queue
-- (job_queue_loads): a round that no queued job fits reads no job.
--
-- MySQL has no partial index: the virtual column queue_status is the
-- status of a dispatchable job (QUEUED or RESTART) and NULL otherwise, and
-- queue_child_status the same for a job with a parent. Their indexes stand
-- in for partial ones: a job's entries change when it is queued and when it
-- starts, and no more when it ends, since NULL stays NULL.
ALTER TABLE jobs
    ADD COLUMN queue_status VARCHAR(16) AS (CASE WHEN status IN ('QUEUED', 'RESTART') THEN status END) VIRTUAL,
    ADD COLUMN queue_child_status VARCHAR(16) AS (CASE WHEN parent_id IS NOT NULL
        AND status IN ('QUEUED', 'RESTART') THEN status END) VIRTUAL,
    ADD INDEX jobs_queue (queue_status, type, priority DESC, id),
    ADD INDEX jobs_queue_load (queue_status, type, job_load),
    ADD INDEX jobs_queue_children (queue_child_status, type, priority DESC, id);
