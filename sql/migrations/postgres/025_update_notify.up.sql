-- Updates of jobs notify the dispatchers themselves, as inserts have since
-- migration 021: each statement that may leave a job in a state they place
-- from ends with jobs_changed_notify. The update trigger of migration 004
-- goes with its function. It read the rows each UPDATE changed through a
-- transition table, for which PostgreSQL copied every one of them into a
-- tuple store, although a start, the most common write with the end of a
-- run, never notifies: about a tenth of the time of a batch of starts or
-- of ends.
DROP TRIGGER jobs_notify_update ON jobs;
DROP FUNCTION jobs_notify_change();
