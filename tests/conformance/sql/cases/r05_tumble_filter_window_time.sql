-- TUMBLE window TVF with a WHERE filter on the input and window_time (the rowtime of the result)
-- in the output.
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
SELECT window_start, window_end, window_time, k, COUNT(*) AS cnt, SUM(v) AS total
FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '5' SECOND))
WHERE v > 30 AND k <> 'k2'
GROUP BY window_start, window_end, window_time, k;
