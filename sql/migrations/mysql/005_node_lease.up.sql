-- The node lease and the lease's terms.
--
-- A node stores how long it may stay silent before it stops its own runs
-- (lease_ms; 0 for a row an older release wrote, which means the default),
-- and which process holds its name: the machine (host_id: its boot id, else
-- its hostname; hostname for people), the pid and the process's start time in clock ticks after
-- boot, so a restart on the same machine can tell a dead former process from
-- a live one.
ALTER TABLE nodes
    ADD COLUMN lease_ms   BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN host_id    VARCHAR(255) NOT NULL DEFAULT '',
    ADD COLUMN hostname   VARCHAR(255) NOT NULL DEFAULT '',
    ADD COLUMN pid        BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN proc_start BIGINT NOT NULL DEFAULT 0;

-- Every taking of the lease that is not a renewal starts a new term; a job
-- starts only under the current term of the dispatcher that offered it.
ALTER TABLE lease
    ADD COLUMN term        BIGINT      NOT NULL DEFAULT 0,
    ADD COLUMN acquired_at DATETIME(6) NOT NULL DEFAULT '1970-01-01 00:00:00';

-- Which dispatcher, under which term, started the job's current attempt.
ALTER TABLE jobs
    ADD COLUMN dispatcher VARCHAR(255) NOT NULL DEFAULT '',
    ADD COLUMN lease_term BIGINT NOT NULL DEFAULT 0;
