(:any_since OR created_at >= :since) AND id > :after_id
ORDER BY id DESC
LIMIT :limit
