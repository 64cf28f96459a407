-- When a dispatcher's heartbeat to the node last went unanswered, NULL
-- while the node answers: the node is on watch, and 'jobctl nodes' and
-- 'jobctl top' say so. Set by the first missed heartbeat, cleared by the
-- next answered one and by every health write (ONLINE, OFFLINE) and
-- registration.
ALTER TABLE nodes ADD COLUMN beat_missed_at TIMESTAMPTZ;
