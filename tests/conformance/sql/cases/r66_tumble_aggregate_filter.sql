-- FILTER (WHERE ...) on the calls of a TUMBLE window aggregate.
CREATE TABLE orders (
  id INT,
  k AS CONCAT('k', CAST(id % 3 AS STRING)),
  v AS id * 10,
  ts AS TO_TIMESTAMP_LTZ(CAST(id AS BIGINT) * 1000, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '20',
  'fields.id.kind' = 'sequence',
  'fields.id.start' = '1',
  'fields.id.end' = '20'
);
SELECT window_start, window_end, k, COUNT(*) FILTER (WHERE v > 50) AS big, SUM(v) FILTER (WHERE v > 50) AS big_total,
  COUNT(*) AS cnt
FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '5' SECOND))
GROUP BY window_start, window_end, k;
