-- Nodes kept free for an oversized job, so it is not starved by smaller
-- ones. In the store, not in the dispatcher's memory, so a new lease holder
-- honours the reservations of the last. One job per node, one node per job.
CREATE TABLE reservations (
    job_id BIGINT NOT NULL PRIMARY KEY REFERENCES jobs (id) ON DELETE CASCADE,
    node   TEXT   NOT NULL UNIQUE
);
