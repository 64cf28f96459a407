-- A condition of the batched updates of jobs (job_start_many,
-- job_update_many_set), whose unnest is named x. A transition under a
-- lease term (x.new_dispatcher and x.new_lease_term) applies only while
-- that term is the current, unexpired lease of that dispatcher; one
-- without applies unguarded. The lease is read once per statement, not
-- once per row. The subquery names no column of the row, so PostgreSQL
-- hashes what it returns and looks each row up in that.
(x.new_dispatcher IS NULL
 OR (x.new_dispatcher, x.new_lease_term) IN (SELECT owner, term FROM lease
                                             WHERE id = 1 AND expires_at > {{now}}))
