-- CUMULATE window TVF (step 2 s, max size 6 s): growing windows sharing a start.
CREATE TABLE orders (
  id INT,
  k AS CONCAT('k', CAST(id % 2 AS STRING)),
  v AS id * 10,
  ts AS TO_TIMESTAMP_LTZ(CAST(id AS BIGINT) * 1000, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '12',
  'fields.id.kind' = 'sequence',
  'fields.id.start' = '1',
  'fields.id.end' = '12'
);
SELECT window_start, window_end, k, COUNT(*) AS cnt, SUM(v) AS total
FROM TABLE(CUMULATE(TABLE orders, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '6' SECOND))
GROUP BY window_start, window_end, k;
