-- The holder renews; anyone takes a lease that expired or was released. Time
-- is the database's clock only, so nodes with skewed clocks still agree. A
-- renewal (the owner's own lease, not yet expired) keeps the term; any other
-- taking starts a new one. The term is assigned before owner and expires_at,
-- which it reads (MySQL assigns left to right with updated values).
{{template "lease_acquire_set"}}
RETURNING term, acquired_at
