-- The ids of the rows a multi-row INSERT just made, from the first one the
-- driver reports. The transaction's snapshot was taken before the INSERT
-- (REPEATABLE READ), so no other transaction's row shows among them even
-- where the ids of concurrent INSERTs interleave.
SELECT id
FROM jobs
WHERE id >= :first_id
ORDER BY id
LIMIT :n
