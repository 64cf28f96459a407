ALTER TABLE jobs DROP INDEX jobs_ended, DROP COLUMN ended_at;
