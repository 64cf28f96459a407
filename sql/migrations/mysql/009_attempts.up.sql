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
-- are the new row's. ended_at is the database clock in microseconds.
--
-- A purged job's attempts go with it (job_purge_attempts); there is no
-- foreign key, whose check would cost every ended attempt a lookup of its
-- job.
CREATE TABLE job_attempts (
    job_id     BIGINT       NOT NULL,
    attempt    INT          NOT NULL,
    node       VARCHAR(255) NOT NULL,
    started_at DATETIME(6)  NULL,
    ended_at   DATETIME(6)  NOT NULL,
    exit_code  INT          NULL,
    ending     VARCHAR(16)  NOT NULL,
    message    TEXT         NOT NULL,
    PRIMARY KEY (job_id, attempt)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- MySQL and MariaDB triggers have no WHEN and fire on every update of a
-- row, so the rule is the WHERE of the body's one statement.
CREATE TRIGGER jobs_record_attempt
    AFTER UPDATE ON jobs
    FOR EACH ROW
    INSERT INTO job_attempts (job_id, attempt, node, started_at, ended_at, exit_code, ending, message)
    SELECT OLD.id, OLD.attempt, OLD.node, OLD.started_at, UTC_TIMESTAMP(6), NEW.exit_code, NEW.status, NEW.message
    FROM DUAL
    WHERE OLD.status IN ('RUNNING', 'PAUSED', 'CANCELLING', 'WAITING')
      AND (OLD.status <> 'PAUSED' OR OLD.node <> '')
      AND NEW.status NOT IN ('RUNNING', 'PAUSED', 'CANCELLING', 'WAITING')
    ON DUPLICATE KEY UPDATE
        node = OLD.node, started_at = OLD.started_at, ended_at = UTC_TIMESTAMP(6), exit_code = NEW.exit_code,
        ending = NEW.status, message = NEW.message;
