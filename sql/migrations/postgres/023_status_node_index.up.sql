-- The live jobs past the queue by status and the live jobs of a node were
-- two indexes, jobs_status_id (status, id) and jobs_node_status (node,
-- status), the second over queued jobs too. So every insert wrote an entry
-- in jobs_node_status and every start one in each, on top of the primary
-- key and the queue. One index serves both readers now, and a queued job
-- enters it only when it starts:
-- - a listing of one status (held jobs, running ones) reads it in id order
--   and stops at its limit, as before;
-- - a node looking for its own jobs names their few statuses, and node is
--   tested in the index, so only the index entries of those statuses are
--   read, not the rows of other nodes;
-- - the loads of the nodes read the load-holding statuses alone.
-- Nothing read the queued jobs of a node.
DROP INDEX jobs_node_status;
DROP INDEX jobs_status_id;
CREATE INDEX jobs_status_id_node ON jobs (status, id, node)
    WHERE status NOT IN ('QUEUED', 'RESTART', 'FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED');
