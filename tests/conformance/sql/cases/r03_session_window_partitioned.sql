-- SESSION window TVF with PARTITION BY (gap 3 s): per key, rows 2 s apart form sessions that
-- break where the id sequence jumps by 10 s.
CREATE TABLE orders (
  id INT,
  k AS CONCAT('k', CAST(id % 2 AS STRING)),
  v AS id * 10,
  ts AS TO_TIMESTAMP_LTZ(CAST(id + (id / 6) * 10 AS BIGINT) * 1000, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '20',
  'fields.id.kind' = 'sequence',
  'fields.id.start' = '1',
  'fields.id.end' = '20'
);
SELECT window_start, window_end, k, COUNT(*) AS cnt, SUM(v) AS total
FROM TABLE(SESSION(TABLE orders PARTITION BY k, DESCRIPTOR(ts), INTERVAL '3' SECOND))
GROUP BY window_start, window_end, k;
