DROP TRIGGER jobs_notify_change ON jobs;
DROP FUNCTION jobs_notify_change();
DROP INDEX jobs_live_key_id;
