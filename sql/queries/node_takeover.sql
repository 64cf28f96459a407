-- A new process takes over the node's row once it is free, when its holder has
-- been silent past its node lease and margin (stale_offset_seconds), or the
-- starting process found on this very host that the former one is gone
-- (by_identity), in which case the row must still name that process, so of
-- two restarts racing for the name only one takes it. Changing no row means
-- it is taken. The maintenance flag is left alone, so an operator's
-- maintenance outlives a restart. The new process runs nothing yet.
UPDATE nodes SET
    url              = :url,
    max_load         = :max_load,
    max_jobs         = :max_jobs,
    weight           = :weight,
    warmup_seconds   = :warmup_seconds,
    accept_exceeding = :accept_exceeding,
    candidate        = :candidate,
    services         = :services,
    state            = 'ONLINE',
    started_at       = {{now}},
    last_seen        = {{now}},
    load_avg         = :load_avg,
    max_load_avg     = :max_load_avg,
    mem_available    = :mem_available,
    reserved_memory  = :reserved_memory,
    cores            = :cores,
    lease_ms         = :lease_ms,
    host_id          = :host_id,
    hostname         = :hostname,
    pid              = :pid,
    proc_start       = :proc_start,
    beat_missed_at   = NULL,
    running_usage    = '[]'
WHERE name = :name
  AND ((:by_identity AND host_id = :old_host_id AND pid = :old_pid AND proc_start = :old_proc_start)
       OR last_seen < {{nowPlus ":stale_offset_seconds"}})
