-- SESSION windows (gap 3 s, PARTITION BY k) over out-of-order rows: a row arriving between two
-- sessions of its key merges them; a row behind the watermark whose session has fired is late.
-- Watermarks after every row, one subtask.
SET 'parallelism.default' = '1';
SET 'pipeline.auto-watermark-interval' = '0';
CREATE TABLE events (
  id INT,
  k STRING,
  v INT,
  t BIGINT,
  ts AS TO_TIMESTAMP_LTZ(t, 3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = '${SQL_DATA}/session_events.csv',
  'format' = 'csv'
);
SELECT window_start, window_end, k, COUNT(*) AS cnt, SUM(v) AS total
FROM TABLE(SESSION(TABLE events PARTITION BY k, DESCRIPTOR(ts), INTERVAL '3' SECOND))
GROUP BY window_start, window_end, k;
