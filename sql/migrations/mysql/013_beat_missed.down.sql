ALTER TABLE nodes DROP COLUMN beat_missed_at;
