-- Every attempt of a job is kept once it ends: which node ran it, when it
-- started and ended, its exit code, and how it ended (the status the job
-- went to and the message it left).
--
-- A trigger writes the row in the very statement that ends the attempt, so
-- recording it costs no extra round trip. An attempt ends when the job had
-- a run on a node (RUNNING, CANCELLING, WAITING, or PAUSED with a node:
-- engine.NodeOwnedStatuses) and its new status is none of those: the rule
-- of engine.EndsAttempt, copied here. The node and start are the old
-- row's (a recovery clears the node); the exit code, ending and message
-- are the new row's. ended_at is the database clock with milliseconds, as
-- every stored time.
--
-- A purged job's attempts go with it (job_purge_attempts); there is no
-- foreign key, whose check would cost every ended attempt a lookup of its
-- job.
CREATE TABLE job_attempts (
    job_id     INTEGER NOT NULL,
    attempt    INTEGER NOT NULL,
    node       TEXT    NOT NULL,
    started_at TEXT,
    ended_at   TEXT    NOT NULL,
    exit_code  INTEGER,
    ending     TEXT    NOT NULL,
    message    TEXT    NOT NULL,
    PRIMARY KEY (job_id, attempt)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER jobs_record_attempt
    AFTER UPDATE OF status ON jobs
    FOR EACH ROW
    WHEN OLD.status IN ('RUNNING', 'PAUSED', 'CANCELLING', 'WAITING')
         AND (OLD.status <> 'PAUSED' OR OLD.node <> '')
         AND NEW.status NOT IN ('RUNNING', 'PAUSED', 'CANCELLING', 'WAITING')
BEGIN
    INSERT INTO job_attempts (job_id, attempt, node, started_at, ended_at, exit_code, ending, message)
    VALUES (OLD.id, OLD.attempt, OLD.node, OLD.started_at, datetime('now', 'subsec'), NEW.exit_code, NEW.status,
            NEW.message)
    ON CONFLICT (job_id, attempt) DO UPDATE SET
        node = excluded.node, started_at = excluded.started_at, ended_at = excluded.ended_at,
        exit_code = excluded.exit_code, ending = excluded.ending, message = excluded.message;
END;
