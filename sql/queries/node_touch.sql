UPDATE nodes
SET last_seen = {{now}}, load_avg = :load_avg, mem_available = :mem_available, cores = :cores
WHERE name = :name
