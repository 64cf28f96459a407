-- The node lease and the lease's terms.
--
-- A node stores how long it may stay silent before it stops its own runs
-- (lease_ms; 0 for a row an older release wrote, which means the default),
-- and which process holds its name: the machine (host_id: its boot id, else
-- its hostname; hostname for people), the pid and the process's start time in clock ticks after
-- boot, so a restart on the same machine can tell a dead former process from
-- a live one.
ALTER TABLE nodes ADD COLUMN lease_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE nodes ADD COLUMN host_id TEXT NOT NULL DEFAULT '';
ALTER TABLE nodes ADD COLUMN hostname TEXT NOT NULL DEFAULT '';
ALTER TABLE nodes ADD COLUMN pid INTEGER NOT NULL DEFAULT 0;
ALTER TABLE nodes ADD COLUMN proc_start INTEGER NOT NULL DEFAULT 0;

-- Every taking of the lease that is not a renewal starts a new term; a job
-- starts only under the current term of the dispatcher that offered it.
ALTER TABLE lease ADD COLUMN term INTEGER NOT NULL DEFAULT 0;
ALTER TABLE lease ADD COLUMN acquired_at TEXT NOT NULL DEFAULT '1970-01-01 00:00:00.000';

-- Which dispatcher, under which term, started the job's current attempt.
ALTER TABLE jobs ADD COLUMN dispatcher TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN lease_term INTEGER NOT NULL DEFAULT 0;
