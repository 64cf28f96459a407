-- The CHECK of jobs.status as migration 001 wrote it, an IN list; see the
-- up migration for how and why the definition's text is edited.
PRAGMA writable_schema = ON;
UPDATE sqlite_schema
SET sql = replace(sql,
                  'status = ''INSTANTIATED'' OR status = ''QUEUED'' OR status = ''RESTART''
                         OR status = ''DISPATCHING'' OR status = ''RUNNING'' OR status = ''PAUSED''
                         OR status = ''WAITING'' OR status = ''CANCELLING'' OR status = ''FINISHED''
                         OR status = ''WARNING'' OR status = ''FAILED'' OR status = ''CANCELLED''
                         OR status = ''DELETED''',
                  'status IN (''INSTANTIATED'', ''QUEUED'', ''RESTART'', ''DISPATCHING'',
                         ''RUNNING'', ''PAUSED'', ''WAITING'', ''CANCELLING'', ''FINISHED'', ''WARNING'', ''FAILED'',
                         ''CANCELLED'', ''DELETED'')')
WHERE type = 'table' AND name = 'jobs';
PRAGMA writable_schema = RESET;
CREATE TABLE schema_version_bump (x INTEGER);
DROP TABLE schema_version_bump;
