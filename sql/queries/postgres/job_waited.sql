-- How long a job waited for its start, in seconds on the clock of the
-- database (engine.Job.Waited), from the time it was due (engine.Job.Due)
-- to started_at. GREATEST passes over a NULL run_after.
date_part('epoch', started_at - GREATEST(COALESCE(queued_at, created_at), run_after))
