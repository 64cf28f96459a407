-- The CHECK of jobs.status tests the status by comparisons joined by OR
-- instead of an IN list, for the reason migration 018 gives: SQLite fills a
-- temporary index with the thirteen values of the list for every row an
-- INSERT or UPDATE writes, and every job is written at least three times.
-- The new test is the same test: status is NOT NULL.
--
-- SQLite cannot alter a CHECK constraint. Rebuilding jobs would copy every
-- job, and dropping the old table would, with foreign keys on (as they are
-- here, in the migration's transaction), delete the logs and reservations
-- of every job. Instead this edits the text of the table's definition, the
-- procedure SQLite documents for removing a CHECK
-- (https://www.sqlite.org/lang_altertable.html#otheralter), which is sound
-- here as every existing row passes the new CHECK exactly when it passes the
-- old; replace() leaves a definition without the old text as it is.
-- writable_schema=RESET makes this connection read the definition again;
-- creating and dropping a table bumps the schema version, which makes every
-- other connection read it again too.
PRAGMA writable_schema = ON;
UPDATE sqlite_schema
SET sql = replace(sql,
                  'status IN (''INSTANTIATED'', ''QUEUED'', ''RESTART'', ''DISPATCHING'',
                         ''RUNNING'', ''PAUSED'', ''WAITING'', ''CANCELLING'', ''FINISHED'', ''WARNING'', ''FAILED'',
                         ''CANCELLED'', ''DELETED'')',
                  'status = ''INSTANTIATED'' OR status = ''QUEUED'' OR status = ''RESTART''
                         OR status = ''DISPATCHING'' OR status = ''RUNNING'' OR status = ''PAUSED''
                         OR status = ''WAITING'' OR status = ''CANCELLING'' OR status = ''FINISHED''
                         OR status = ''WARNING'' OR status = ''FAILED'' OR status = ''CANCELLED''
                         OR status = ''DELETED''')
WHERE type = 'table' AND name = 'jobs';
PRAGMA writable_schema = RESET;
CREATE TABLE schema_version_bump (x INTEGER);
DROP TABLE schema_version_bump;
