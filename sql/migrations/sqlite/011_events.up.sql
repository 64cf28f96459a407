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
    id         INTEGER PRIMARY KEY AUTOINCREMENT, -- followers read "after id N": never reuse one
    created_at TEXT    NOT NULL,
    who        TEXT    NOT NULL,
    verb       TEXT    NOT NULL,
    job_id     INTEGER,
    node       TEXT    NOT NULL DEFAULT '',
    type       TEXT    NOT NULL DEFAULT '',
    schedule   TEXT    NOT NULL DEFAULT '',
    detail     TEXT    NOT NULL DEFAULT '',
    reason     TEXT    NOT NULL DEFAULT ''
) STRICT;

CREATE INDEX events_job_id ON events (job_id, id);
CREATE INDEX events_node_id ON events (node, id);
CREATE INDEX events_created_at ON events (created_at);
