-- A condition, always true, that ends every PostgreSQL insert into jobs.
-- The statement notifies the dispatchers itself, once, when a job it
-- inserted (its data-modifying WITH named j, returning status) is one they
-- may place (engine.WakingStatuses), as the update trigger does for
-- updates. An insert trigger would load PL/pgSQL into every new server
-- process, a third of the server time of a one-shot submit. The scalar
-- subquery does not depend on the row, so PostgreSQL runs it once.
(SELECT count(pg_notify('jobctl_job_changes', current_schema()))
   FROM (SELECT 1 FROM j WHERE j.status IN {{statuses "waking"}} LIMIT 1) AS waking) >= 0
