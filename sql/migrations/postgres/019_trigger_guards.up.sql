-- Nothing changes here: MySQL's triggers of jobs became one whose
-- statements run only when a row's values call for them (see
-- mysql/019_trigger_guards.up.sql). PostgreSQL's trigger runs once per
-- statement, over all the rows it wrote.
SELECT 1;
