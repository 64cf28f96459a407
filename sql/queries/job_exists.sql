SELECT COUNT(*) FROM jobs WHERE id = :id
