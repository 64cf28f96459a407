-- Late results are no longer taken. The rows put back from DISPATCHING
-- stay in the queue: they run as any RESTART job does.
DROP TRIGGER jobs_take_late_result;
