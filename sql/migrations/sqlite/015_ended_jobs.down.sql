DROP INDEX jobs_ended;
