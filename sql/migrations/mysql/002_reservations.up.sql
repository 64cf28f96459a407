-- Nodes kept free for an oversized job, so it is not starved by smaller
-- ones. In the store, not in the dispatcher's memory, so a new lease holder
-- honours the reservations of the last. One job per node, one node per job.
CREATE TABLE reservations (
    job_id BIGINT       NOT NULL PRIMARY KEY,
    node   VARCHAR(255) NOT NULL,
    CONSTRAINT reservations_job FOREIGN KEY (job_id) REFERENCES jobs (id) ON DELETE CASCADE,
    CONSTRAINT reservations_node UNIQUE (node)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
