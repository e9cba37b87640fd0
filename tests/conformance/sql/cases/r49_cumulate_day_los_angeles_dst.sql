-- CUMULATE windows (6-hour steps up to 1 day) over a TIMESTAMP_LTZ rowtime with
-- table.local-time-zone America/Los_Angeles across the start of daylight saving time
-- (2021-03-14 02:00 local): windows align at local midnight. A row every 5 hours from
-- 2021-03-13 04:00 UTC.
SET 'table.local-time-zone' = 'America/Los_Angeles';
CREATE TABLE events (
  id INT,
  ts AS TO_TIMESTAMP_LTZ(CAST(id + 89755 AS BIGINT) * 18000000, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '16',
  'fields.id.kind' = 'sequence',
  'fields.id.start' = '1',
  'fields.id.end' = '16'
);
SELECT window_start, window_end, window_time, COUNT(*) AS cnt, MAX(id) AS last_id
FROM TABLE(CUMULATE(TABLE events, DESCRIPTOR(ts), INTERVAL '6' HOUR, INTERVAL '1' DAY))
GROUP BY window_start, window_end, window_time;
