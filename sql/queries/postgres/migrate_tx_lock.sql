-- Transaction-level advisory lock, keyed by schema so separate schemas of
-- one database migrate independently. The transaction's end releases it, so
-- it leaves nothing behind on a server connection that a transaction pooler
-- hands to another client next. Returns 1 once the lock is held.
SELECT 1 FROM (SELECT pg_advisory_xact_lock(hashtext('jobctl migrate ' || COALESCE(current_schema(), '')))) AS locked
