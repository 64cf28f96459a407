-- A condition of the batched updates of jobs (PostgreSQL job_start_many,
-- job_update_many_set of PostgreSQL and SQLite), whose transitions are
-- named x. A transition under a lease term (x.new_dispatcher and
-- x.new_lease_term) applies only while that term is the current,
-- unexpired lease of that dispatcher; one without applies unguarded. The
-- lease is read once per statement, not once per row. The subquery names
-- no column of the row, so the database reads it once into a list (a hash,
-- on PostgreSQL) and looks each row up in that.
(x.new_dispatcher IS NULL
 OR (x.new_dispatcher, x.new_lease_term) IN (SELECT owner, term FROM lease
                                             WHERE id = 1 AND expires_at > {{now}}))
