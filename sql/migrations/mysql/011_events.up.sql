-- The audit trail: every change an operator (a command or the dashboard)
-- or a job through its node makes, recorded in the transaction that makes
-- it. who is "user@host" or "job ID@node"; verb is the command ("cancel",
-- "nodes maintenance"); job_id, node, type and schedule name what it
-- changed; detail says how, reason why (the operator's --reason).
--
-- The events of a job go when the job is pruned (JobPurge), the others by
-- age. There is no foreign key to jobs, whose check would cost every job
-- change a lookup.
CREATE TABLE events (
    id         BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,
    created_at DATETIME(6)  NOT NULL,
    who        VARCHAR(255) NOT NULL,
    verb       VARCHAR(255) NOT NULL,
    job_id     BIGINT       NULL,
    node       VARCHAR(255) NOT NULL DEFAULT '',
    type       VARCHAR(255) NOT NULL DEFAULT '',
    schedule   VARCHAR(255) NOT NULL DEFAULT '',
    detail     TEXT         NOT NULL,
    reason     TEXT         NOT NULL,
    INDEX events_job_id (job_id, id),
    INDEX events_node_id (node, id),
    INDEX events_created_at (created_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
