-- Dispatch stays fast however many ended jobs the table holds, and every
-- process hears of job changes that may let the dispatcher place more work.

-- The key check of job_list_dispatchable looks for another job of the same
-- key that has not ended. Only live jobs are in this index, so a key with a
-- long history (a nightly job's) costs nothing per queued job; through
-- jobs_key_id every ended job of the key was read for each one.
CREATE INDEX jobs_live_key_id ON jobs (job_key, id)
    WHERE status NOT IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED');

-- Every transition rewrites a job's row with a new entry in each index the
-- row belongs to (the status changes, so none is a HOT update). The indexes
-- that serve only live jobs leave ended ones out, so a job's final write
-- touches the primary key alone, and a table of a million ended jobs keeps
-- them small. Keyless and parentless jobs stay out of the key and parent
-- indexes.
DROP INDEX jobs_status_id;
CREATE INDEX jobs_status_id ON jobs (status, id)
    WHERE status NOT IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED');
DROP INDEX jobs_node_status;
CREATE INDEX jobs_node_status ON jobs (node, status)
    WHERE status NOT IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED');
DROP INDEX jobs_key_id;
CREATE INDEX jobs_key_id ON jobs (job_key, id) WHERE job_key <> '';
DROP INDEX jobs_parent_id;
CREATE INDEX jobs_parent_id ON jobs (parent_id) WHERE parent_id IS NOT NULL;

-- A job change that may wake the dispatcher (engine.WakingStatuses: work
-- appeared, or a node's load or a key was freed) notifies the channel
-- jobctl_job_changes. The payload is the schema of this table, constant for
-- one cluster: PostgreSQL delivers identical notifications of one
-- transaction once, so a batch of a thousand finishes is one notification,
-- and clusters in different schemas of one database do not wake each other.
CREATE FUNCTION jobs_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('jobctl_job_changes', TG_TABLE_SCHEMA);
    RETURN NULL;
END
$$;

-- WHEN is judged without calling the function, so the many updates that
-- wake nobody (dispatch, start) cost next to nothing; progress reports do
-- not set status and never fire it.
CREATE TRIGGER jobs_notify_change
    AFTER INSERT OR UPDATE OF status ON jobs
    FOR EACH ROW
    WHEN (NEW.status IN ('QUEUED', 'RESTART', 'WAITING', 'FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED'))
    EXECUTE FUNCTION jobs_notify_change();
