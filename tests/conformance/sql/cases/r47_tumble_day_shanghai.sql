-- One-day TUMBLE windows over a TIMESTAMP_LTZ rowtime with table.local-time-zone Asia/Shanghai
-- (UTC+8): Flink aligns them at local midnight (16:00 UTC); window_start/window_end are local
-- TIMESTAMPs, window_time a TIMESTAMP_LTZ. A row every 5 hours from 1970-01-01 05:00 UTC, one
-- subtask, a watermark after every row.
SET 'parallelism.default' = '1';
SET 'pipeline.auto-watermark-interval' = '0';
SET 'table.local-time-zone' = 'Asia/Shanghai';
CREATE TABLE events (
  id INT,
  ts AS TO_TIMESTAMP_LTZ(CAST(id AS BIGINT) * 18000000, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '20',
  'fields.id.kind' = 'sequence',
  'fields.id.start' = '1',
  'fields.id.end' = '20'
);
SELECT window_start, window_end, window_time, COUNT(*) AS cnt, MIN(id) AS first_id
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' DAY))
GROUP BY window_start, window_end, window_time;
