ALTER TABLE jobs DROP INDEX jobs_live_key_id, DROP COLUMN live_key;
