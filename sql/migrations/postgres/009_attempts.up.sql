-- Every attempt of a job is kept once it ends: which node ran it, when it
-- started and ended, its exit code, and how it ended (the status the job
-- went to and the message it left).
--
-- A trigger writes the rows in the very statement that ends the attempts,
-- so the node recording a batch of results and the dispatcher recovering a
-- lost node's jobs make no extra round trip for them. An attempt ends when
-- the job had a run on a node (RUNNING, CANCELLING, WAITING, or PAUSED with
-- a node: engine.NodeOwnedStatuses) and its new status is none of those:
-- the rule of engine.EndsAttempt, copied here. The node and start are the
-- old row's (a recovery clears the node); the exit code, ending and
-- message are the new row's. ended_at is the database clock when the row
-- is written.
--
-- A purged job's attempts go with it (job_purge_attempts); there is no
-- foreign key, whose check would cost every ended attempt a lookup of its
-- job.
CREATE TABLE job_attempts (
    job_id     BIGINT      NOT NULL,
    attempt    INTEGER     NOT NULL,
    node       TEXT        NOT NULL,
    started_at TIMESTAMPTZ,
    ended_at   TIMESTAMPTZ NOT NULL,
    exit_code  INTEGER,
    ending     TEXT        NOT NULL,
    message    TEXT        NOT NULL,
    PRIMARY KEY (job_id, attempt)
);

-- Once per statement, not per row: a batch of a thousand results is one
-- INSERT … SELECT over the statement's old and new rows, where a row
-- trigger ran the function and its INSERT a thousand times (a third of
-- the nodes' throughput in a burn-down). The statements of one batch name
-- distinct jobs, so no row of job_attempts is written twice by one INSERT.
CREATE FUNCTION jobs_record_attempts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO job_attempts (job_id, attempt, node, started_at, ended_at, exit_code, ending, message)
    SELECT o.id, o.attempt, o.node, o.started_at, clock_timestamp(), n.exit_code, n.status, n.message
    FROM jobs_before AS o JOIN jobs_after AS n ON n.id = o.id
    WHERE o.status IN ('RUNNING', 'PAUSED', 'CANCELLING', 'WAITING')
      AND (o.status <> 'PAUSED' OR o.node <> '')
      AND n.status NOT IN ('RUNNING', 'PAUSED', 'CANCELLING', 'WAITING')
    ON CONFLICT (job_id, attempt) DO UPDATE SET
        node = EXCLUDED.node, started_at = EXCLUDED.started_at, ended_at = EXCLUDED.ended_at,
        exit_code = EXCLUDED.exit_code, ending = EXCLUDED.ending, message = EXCLUDED.message;
    RETURN NULL;
END
$$;

CREATE TRIGGER jobs_record_attempts
    AFTER UPDATE ON jobs
    REFERENCING OLD TABLE AS jobs_before NEW TABLE AS jobs_after
    FOR EACH STATEMENT
    EXECUTE FUNCTION jobs_record_attempts();
