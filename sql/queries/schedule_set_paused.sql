-- A NULL next_fire_at leaves it as it is; read and written back it could
-- undo the move of a fire that committed in between.
UPDATE schedules
SET paused = :paused, next_fire_at = COALESCE(:next_fire_at, next_fire_at), updated_at = {{now}}
WHERE name = :name
