SELECT term, acquired_at FROM lease WHERE id = 1
