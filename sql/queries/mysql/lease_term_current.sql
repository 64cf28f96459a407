-- Whether a lease term is the current, unexpired lease of its owner, so
-- that the starts made under it in this transaction may stand. A locking
-- read, so it sees the last committed lease whatever the transaction's
-- snapshot, and a new term waits for this transaction's end.
SELECT COUNT(*) FROM lease
WHERE id = 1 AND owner = :owner AND term = :term AND expires_at > {{now}}
LOCK IN SHARE MODE
