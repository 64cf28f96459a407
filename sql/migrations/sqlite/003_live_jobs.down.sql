DROP INDEX jobs_live_key_id;
