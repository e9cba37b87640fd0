-- TUMBLE window over out-of-order rows: a row whose window has fired (watermark past
-- window_end - 1) is late and dropped; watermarks after every row (auto-watermark-interval 0),
-- one subtask, so which rows are late is deterministic.
SET 'parallelism.default' = '1';
SET 'pipeline.auto-watermark-interval' = '0';
CREATE TABLE events (
  id INT,
  k STRING,
  v INT,
  t BIGINT,
  ts AS TO_TIMESTAMP_LTZ(t, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = '${SQL_DATA}/late_events.csv',
  'format' = 'csv'
);
SELECT window_start, window_end, k, COUNT(*) AS cnt, SUM(v) AS total
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '5' SECOND))
GROUP BY window_start, window_end, k;
