-- A dispatcher's heartbeat to the node went unanswered (missed) or was
-- answered. beat_missed_at keeps the time of the first miss in a row, and
-- an answer clears it.
UPDATE nodes
SET beat_missed_at = CASE WHEN :missed THEN COALESCE(beat_missed_at, {{now}}) ELSE NULL END
WHERE name = :name
