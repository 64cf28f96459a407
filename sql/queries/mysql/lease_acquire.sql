-- lease_acquire_set; MySQL has no UPDATE … RETURNING, so the store reads the
-- term back (lease_term_get) in the same transaction.
{{template "lease_acquire_set"}}
