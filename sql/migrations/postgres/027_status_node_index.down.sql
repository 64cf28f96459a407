DROP INDEX jobs_status_node;
CREATE INDEX jobs_status_id_node ON jobs (status, id, node)
    WHERE status NOT IN ('QUEUED', 'RESTART', 'FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED');
