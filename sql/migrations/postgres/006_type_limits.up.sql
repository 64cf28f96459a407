-- Cluster-wide caps on how many jobs of one type run at once. The
-- dispatcher reads them, with the count of each limited type's running
-- jobs, at the start of every round, so a new lease holder obeys them at
-- once.
CREATE TABLE type_limits (
    type        TEXT        NOT NULL PRIMARY KEY,
    max_running INTEGER     NOT NULL CHECK (max_running >= 1),
    updated_at  TIMESTAMPTZ NOT NULL
);
