DROP INDEX jobs_status_id_node;
CREATE INDEX jobs_status_id ON jobs (status, id)
    WHERE status NOT IN ('QUEUED', 'RESTART', 'FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED');
CREATE INDEX jobs_node_status ON jobs (node, status)
    WHERE status NOT IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED');
