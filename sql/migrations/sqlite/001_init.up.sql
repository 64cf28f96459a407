-- jobctl's initial schema for SQLite.
--
-- Timestamps are TEXT in UTC, 'YYYY-MM-DD HH:MM:SS.SSS' (datetime('now',
-- 'subsec')), so they compare correctly as strings; the store binds Go times
-- in exactly that form. Tables are STRICT so a wrongly typed value fails
-- loudly instead of being stored as something else.

CREATE TABLE jobs (
    id               INTEGER PRIMARY KEY AUTOINCREMENT, -- AUTOINCREMENT: ids are never reused after a prune
    type             TEXT    NOT NULL,
    operation        TEXT    NOT NULL DEFAULT '',
    args             TEXT    NOT NULL DEFAULT '[]',  -- JSON array of strings
    payload          TEXT    NOT NULL DEFAULT '{}',  -- JSON
    job_load         REAL    NOT NULL DEFAULT 1,
    status           TEXT    NOT NULL CHECK (status IN ('INSTANTIATED', 'QUEUED', 'RESTART', 'DISPATCHING',
                         'RUNNING', 'PAUSED', 'WAITING', 'CANCELLING', 'FINISHED', 'WARNING', 'FAILED',
                         'CANCELLED', 'DELETED')),
    node             TEXT    NOT NULL DEFAULT '',
    job_key          TEXT    NOT NULL DEFAULT '',
    parent_id        INTEGER REFERENCES jobs (id) ON DELETE SET NULL,
    attempt          INTEGER NOT NULL DEFAULT 0,
    max_attempts     INTEGER NOT NULL DEFAULT 1,
    attempt_base     INTEGER NOT NULL DEFAULT 0,  -- attempts made before the last requeue
    backoff_seconds  REAL    NOT NULL DEFAULT 0,
    rollback         TEXT    NOT NULL DEFAULT '',
    run_after        TEXT,
    timeout_seconds  REAL    NOT NULL,
    progress         INTEGER NOT NULL DEFAULT 0,
    progress_message TEXT    NOT NULL DEFAULT '',
    exit_code        INTEGER,
    message          TEXT    NOT NULL DEFAULT '',
    version          INTEGER NOT NULL DEFAULT 1,
    creator          TEXT    NOT NULL DEFAULT '',
    created_at       TEXT    NOT NULL,
    queued_at        TEXT,
    started_at       TEXT,
    finished_at      TEXT
) STRICT;

CREATE INDEX jobs_status_id ON jobs (status, id);
CREATE INDEX jobs_key_id ON jobs (job_key, id);
CREATE INDEX jobs_node_status ON jobs (node, status);
CREATE INDEX jobs_parent_id ON jobs (parent_id);

CREATE TABLE job_logs (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT, -- followers read "after seq N": never reuse one
    job_id     INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    attempt    INTEGER NOT NULL,
    data       BLOB    NOT NULL,
    created_at TEXT    NOT NULL
) STRICT;

CREATE INDEX job_logs_job_seq ON job_logs (job_id, seq);

CREATE TABLE nodes (
    name             TEXT    PRIMARY KEY,
    url              TEXT    NOT NULL DEFAULT '',
    max_load         REAL    NOT NULL DEFAULT 0,
    max_jobs         INTEGER NOT NULL DEFAULT 0,
    weight           INTEGER NOT NULL DEFAULT 0,
    warmup_seconds   REAL    NOT NULL DEFAULT 0,
    accept_exceeding INTEGER NOT NULL DEFAULT 1,
    candidate        INTEGER NOT NULL DEFAULT 0,
    services         TEXT    NOT NULL DEFAULT '[]', -- JSON array of services
    -- Health as the node and the heartbeat see it; maintenance is the
    -- operator's separate flag, so no health write can clear it.
    state            TEXT    NOT NULL CHECK (state IN ('ONLINE', 'OFFLINE', 'ERROR')),
    maintenance      INTEGER NOT NULL DEFAULT 0,
    started_at       TEXT    NOT NULL,
    last_seen        TEXT    NOT NULL,
    load_avg         REAL    NOT NULL DEFAULT 0,
    max_load_avg     REAL    NOT NULL DEFAULT 0,
    mem_available    INTEGER NOT NULL DEFAULT 0,
    reserved_memory  INTEGER NOT NULL DEFAULT 0,
    cores            INTEGER NOT NULL DEFAULT 0
) STRICT;

-- The dispatcher lease: exactly one row, taken with one conditional UPDATE.
CREATE TABLE lease (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    owner      TEXT,
    expires_at TEXT NOT NULL
) STRICT;

INSERT INTO lease (id, owner, expires_at) VALUES (1, NULL, '1970-01-01 00:00:00.000');

CREATE TABLE settings (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;
