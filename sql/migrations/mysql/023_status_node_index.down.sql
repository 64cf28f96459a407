-- Nothing to revert (see 023_status_node_index.up.sql).
SELECT 1;
