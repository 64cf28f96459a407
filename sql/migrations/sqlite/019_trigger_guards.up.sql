-- Nothing changes here: MySQL's triggers of jobs became one whose
-- statements run only when a row's values call for them (see
-- mysql/019_trigger_guards.up.sql). SQLite's triggers have a WHEN.
SELECT 1;
