-- Cluster-wide caps on how many jobs of one type run at once. The
-- dispatcher reads them, with the count of each limited type's running
-- jobs, at the start of every round, so a new lease holder obeys them at
-- once. The collation is that of jobs.type, which it is joined with.
CREATE TABLE type_limits (
    type        VARCHAR(255) NOT NULL PRIMARY KEY,
    max_running INT          NOT NULL,
    updated_at  DATETIME(6)  NOT NULL,
    CONSTRAINT type_limits_max_running CHECK (max_running >= 1)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
