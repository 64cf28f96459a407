-- Schedules: a named cron expression plus the job it creates at each fire.
--
-- next_fire_at is on the database clock. The lease holder fires a due
-- schedule by creating its job and moving next_fire_at on in one
-- transaction, the move guarded by the next_fire_at it read, so two
-- holders racing create one job per fire time. job is the template, the
-- JSON of engine.JobTemplate. last_job_id has no foreign key: pruning that
-- job leaves the schedule as it is, and a fire reads a missing last job as
-- one that has ended.
CREATE TABLE schedules (
    name         VARCHAR(255) NOT NULL PRIMARY KEY,
    cron         VARCHAR(255) NOT NULL,
    tz           VARCHAR(255) NOT NULL,
    overlap      VARCHAR(16)  NOT NULL,
    paused       BOOLEAN      NOT NULL DEFAULT FALSE,
    job          LONGTEXT     NOT NULL,
    next_fire_at DATETIME(6)  NOT NULL,
    last_job_id  BIGINT       NULL,
    creator      VARCHAR(255) NOT NULL DEFAULT '',
    created_at   DATETIME(6)  NOT NULL,
    updated_at   DATETIME(6)  NOT NULL,
    CONSTRAINT schedules_overlap CHECK (overlap IN ('skip', 'allow')),
    INDEX schedules_due (next_fire_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
