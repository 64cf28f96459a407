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
    name         TEXT        PRIMARY KEY,
    cron         TEXT        NOT NULL,
    tz           TEXT        NOT NULL,
    overlap      TEXT        NOT NULL CHECK (overlap IN ('skip', 'allow')),
    paused       BOOLEAN     NOT NULL DEFAULT FALSE,
    job          TEXT        NOT NULL,
    next_fire_at TIMESTAMPTZ NOT NULL,
    last_job_id  BIGINT,
    creator      TEXT        NOT NULL DEFAULT '',
    created_at   TIMESTAMPTZ NOT NULL,
    updated_at   TIMESTAMPTZ NOT NULL
);

CREATE INDEX schedules_due ON schedules (next_fire_at);
