-- A named lock held by this connection, per database. Lock names are at
-- most 64 characters, hence the hash. Returns 1 once held, 0 after waiting
-- ten minutes in vain.
SELECT COALESCE(GET_LOCK(CONCAT('jobctl migrate ', SHA1(DATABASE())), 600), 0) AS locked
