-- The head of one type's queue, as job_list_dispatchable reads it, of the
-- children only, and of those only the ones whose parent has no child on a
-- node (engine.Job.HoldsLoad); the first child of such a parent may be
-- offered to a node without room (placement.FilterOptions.FirstChild).
SELECT {{template "job_columns_queued"}}
FROM jobs
WHERE {{template "job_queue_child_match" ":status"}}
  AND type = :type
  AND {{template "job_dispatchable_terms"}}
  AND {{template "job_no_sibling_on_node"}}
ORDER BY priority DESC, id
LIMIT :limit
