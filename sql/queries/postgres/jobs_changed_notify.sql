-- A condition, always true, that ends every PostgreSQL statement that
-- inserts into or updates jobs where a job may enter a state the
-- dispatchers may place from (engine.WakingStatuses). The statement
-- notifies them itself, once, when a job it wrote (its data-modifying
-- WITH named j, returning status) is in such a state. A trigger did that
-- for updates, and inserts before it; one that reads the rows a statement
-- changed made PostgreSQL copy each of them into a tuple store, for every
-- start and every end of a run, and an insert trigger loaded PL/pgSQL into
-- every new server process, a third of the server time of a one-shot
-- submit. The scalar subquery does not depend on the row, so PostgreSQL
-- runs it once.
(SELECT count(pg_notify('jobctl_job_changes', current_schema()))
   FROM (SELECT 1 FROM j WHERE j.status IN {{statuses "waking"}} LIMIT 1) AS waking) >= 0
