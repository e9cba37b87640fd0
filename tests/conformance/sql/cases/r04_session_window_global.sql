-- SESSION window TVF without PARTITION BY (gap 3 s): one session stream over all rows.
CREATE TABLE orders (
  id INT,
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
SELECT window_start, window_end, COUNT(*) AS cnt, MIN(v) AS min_v, MAX(v) AS max_v
FROM TABLE(SESSION(TABLE orders, DESCRIPTOR(ts), INTERVAL '3' SECOND))
GROUP BY window_start, window_end;
