-- A new process takes over the node's row, unless a live process still
-- holds the name (not OFFLINE and seen recently). Changing no row means it
-- is taken. The maintenance flag is left alone, so an operator's
-- maintenance outlives a restart.
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
    cores            = :cores
WHERE name = :name
  AND NOT (state <> 'OFFLINE' AND last_seen > {{nowPlus ":stale_offset_seconds"}})
