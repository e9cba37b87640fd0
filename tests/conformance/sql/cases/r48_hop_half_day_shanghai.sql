-- HOP windows (1 day, sliding by 12 hours) over a TIMESTAMP_LTZ rowtime with
-- table.local-time-zone Asia/Shanghai: slides start at local midnight and noon (16:00 and
-- 04:00 UTC). A row every 5 hours from 1970-01-01 05:00 UTC, one subtask, a watermark after
-- every row.
SET 'parallelism.default' = '1';
SET 'pipeline.auto-watermark-interval' = '0';
SET 'table.local-time-zone' = 'Asia/Shanghai';
CREATE TABLE events (
  id INT,
  ts AS TO_TIMESTAMP_LTZ(CAST(id AS BIGINT) * 18000000, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '12',
  'fields.id.kind' = 'sequence',
  'fields.id.start' = '1',
  'fields.id.end' = '12'
);
SELECT window_start, window_end, COUNT(*) AS cnt, MIN(id) AS first_id
FROM TABLE(HOP(TABLE events, DESCRIPTOR(ts), INTERVAL '12' HOUR, INTERVAL '1' DAY))
GROUP BY window_start, window_end;
