-- How long a job waited for its start, in seconds on the clock of the
-- database (engine.Job.Waited), from the time it was due (engine.Job.Due)
-- to started_at. SQLite keeps times to the millisecond as text of one
-- layout, so the later of two is the greater text, and the difference of
-- two Julian days is rounded to the millisecond their precision allows.
ROUND((julianday(started_at)
       - julianday(MAX(COALESCE(queued_at, created_at), COALESCE(run_after, queued_at, created_at)))) * 86400, 3)
