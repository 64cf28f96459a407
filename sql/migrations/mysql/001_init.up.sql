-- jobctl's initial schema for MySQL 8.0.13+ and MariaDB 10.2+.
--
-- Timestamps are DATETIME(6) holding UTC; the store sets them from
-- UTC_TIMESTAMP(6) and reads them as UTC. Strings use a binary collation so
-- keys and names compare exactly, as on the other backends. MySQL cannot
-- roll DDL back: should this fail half-way, drop what it created and retry.

CREATE TABLE jobs (
    id               BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,
    type             VARCHAR(255) NOT NULL,
    operation        VARCHAR(255) NOT NULL DEFAULT '',
    args             LONGTEXT     NOT NULL,  -- JSON array of strings
    payload          LONGTEXT     NOT NULL,  -- JSON
    job_load         DOUBLE       NOT NULL DEFAULT 1,
    status           VARCHAR(16)  NOT NULL,
    node             VARCHAR(255) NOT NULL DEFAULT '',
    job_key          VARCHAR(255) NOT NULL DEFAULT '',
    parent_id        BIGINT       NULL,
    attempt          INT          NOT NULL DEFAULT 0,
    max_attempts     INT          NOT NULL DEFAULT 1,
    attempt_base     INT          NOT NULL DEFAULT 0,  -- attempts made before the last requeue
    backoff_seconds  DOUBLE       NOT NULL DEFAULT 0,
    rollback         TEXT         NOT NULL,
    run_after        DATETIME(6)  NULL,
    timeout_seconds  DOUBLE       NOT NULL,
    progress         INT          NOT NULL DEFAULT 0,
    progress_message TEXT         NOT NULL DEFAULT (''),
    exit_code        INT          NULL,
    message          TEXT         NOT NULL DEFAULT (''),
    version          BIGINT       NOT NULL DEFAULT 1,
    creator          VARCHAR(255) NOT NULL DEFAULT '',
    created_at       DATETIME(6)  NOT NULL,
    queued_at        DATETIME(6)  NULL,
    started_at       DATETIME(6)  NULL,
    finished_at      DATETIME(6)  NULL,
    CONSTRAINT jobs_status CHECK (status IN ('INSTANTIATED', 'QUEUED', 'RESTART', 'DISPATCHING', 'RUNNING',
        'PAUSED', 'WAITING', 'CANCELLING', 'FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED')),
    CONSTRAINT jobs_parent FOREIGN KEY (parent_id) REFERENCES jobs (id) ON DELETE SET NULL,
    INDEX jobs_status_id (status, id),
    INDEX jobs_key_id (job_key, id),
    INDEX jobs_node_status (node, status),
    INDEX jobs_parent_id (parent_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE job_logs (
    seq        BIGINT      NOT NULL AUTO_INCREMENT PRIMARY KEY,
    job_id     BIGINT      NOT NULL,
    attempt    INT         NOT NULL,
    data       LONGBLOB    NOT NULL,
    created_at DATETIME(6) NOT NULL,
    CONSTRAINT job_logs_job FOREIGN KEY (job_id) REFERENCES jobs (id) ON DELETE CASCADE,
    INDEX job_logs_job_seq (job_id, seq)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE nodes (
    name             VARCHAR(255) NOT NULL PRIMARY KEY,
    url              TEXT         NOT NULL,
    max_load         DOUBLE       NOT NULL DEFAULT 0,
    max_jobs         INT          NOT NULL DEFAULT 0,
    weight           INT          NOT NULL DEFAULT 0,
    warmup_seconds   DOUBLE       NOT NULL DEFAULT 0,
    accept_exceeding BOOLEAN      NOT NULL DEFAULT TRUE,
    candidate        BOOLEAN      NOT NULL DEFAULT FALSE,
    services         LONGTEXT     NOT NULL,  -- JSON array of services
    -- Health as the node and the heartbeat see it; maintenance is the
    -- operator's separate flag, so no health write can clear it.
    state            VARCHAR(16)  NOT NULL,
    maintenance      BOOLEAN      NOT NULL DEFAULT FALSE,
    started_at       DATETIME(6)  NOT NULL,
    last_seen        DATETIME(6)  NOT NULL,
    load_avg         DOUBLE       NOT NULL DEFAULT 0,
    max_load_avg     DOUBLE       NOT NULL DEFAULT 0,
    mem_available    BIGINT       NOT NULL DEFAULT 0,
    reserved_memory  BIGINT       NOT NULL DEFAULT 0,
    cores            INT          NOT NULL DEFAULT 0,
    CONSTRAINT nodes_state CHECK (state IN ('ONLINE', 'OFFLINE', 'ERROR'))
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- The dispatcher lease: exactly one row, taken with one conditional UPDATE.
CREATE TABLE lease (
    id         INT          NOT NULL PRIMARY KEY,
    owner      VARCHAR(255) NULL,
    expires_at DATETIME(6)  NOT NULL,
    CONSTRAINT lease_single_row CHECK (id = 1)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

INSERT INTO lease (id, owner, expires_at) VALUES (1, NULL, '1970-01-01 00:00:00');

CREATE TABLE settings (
    name  VARCHAR(255) NOT NULL PRIMARY KEY,
    value TEXT         NOT NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
