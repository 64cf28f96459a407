-- Fenced by attempt and node, so a late report of an earlier attempt, or of
-- a node that lost the job, changes nothing. Progress is not a transition,
-- so the version stays.
UPDATE jobs SET progress = :progress, progress_message = :message
WHERE id = :id AND attempt = :attempt AND node = :node
  AND status IN {{statuses "node_owned"}}
