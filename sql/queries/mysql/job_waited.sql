-- How long a job waited for its start, in seconds on the clock of the
-- database (engine.Job.Waited), from the time it was due (engine.Job.Due)
-- to started_at. GREATEST is NULL when any of its values is, so a NULL
-- run_after stands for the time it was queued. Divided by a DOUBLE, the
-- microseconds keep their precision in seconds.
TIMESTAMPDIFF(MICROSECOND,
              GREATEST(COALESCE(queued_at, created_at), COALESCE(run_after, queued_at, created_at)),
              started_at) / 1e6
