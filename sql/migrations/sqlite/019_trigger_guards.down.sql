-- Nothing to undo (see 019_trigger_guards.up.sql).
SELECT 1;
