-- Job priorities, and the queue as the dispatcher reads it.
--
-- A job's priority orders the queue: the dispatcher takes RESTART jobs
-- first, then the higher priority, then the older job. 50 is the default
-- (engine.DefaultPriority); the range 1 to 100 is checked by the engine.
ALTER TABLE jobs ADD COLUMN priority INTEGER NOT NULL DEFAULT 50;

-- The dispatcher reads each job type's queue apart, in dispatch order, and
-- only the jobs whose load fits the most free room of a node that runs the
-- type (job_list_dispatchable), so a round reads what it can place and
-- never pages through jobs that cannot fit. jobs_queue_load answers, per
-- type, the lightest and heaviest queued load, and jobs_queue the types
-- queued at all, each in a few index steps however long the queue
-- (job_queue_loads): a round that no queued job fits reads no job.
--
-- Only dispatchable rows are in these indexes, so they stay as small as the
-- queue. SQLite uses a partial index only for a query that states its WHERE
-- terms as they are written here, and the queries do.
CREATE INDEX jobs_queue ON jobs (status, type, priority DESC, id)
    WHERE status IN ('QUEUED', 'RESTART');
CREATE INDEX jobs_queue_load ON jobs (status, type, job_load)
    WHERE status IN ('QUEUED', 'RESTART');
-- The children in the queue, for the first child of a parent none of whose
-- children run yet, which may be offered to a node without room.
CREATE INDEX jobs_queue_children ON jobs (status, type, priority DESC, id)
    WHERE parent_id IS NOT NULL AND status IN ('QUEUED', 'RESTART');
