-- Event-time interval LEFT JOIN over CSV files (one subtask, a watermark after every row): an
-- order without a shipment within 2 s after it comes NULL-padded once the watermark passes;
-- both files ascend in time, so no row expires before its match can arrive.
SET 'parallelism.default' = '1';
SET 'pipeline.auto-watermark-interval' = '0';
CREATE TABLE orders (
  id INT,
  t BIGINT,
  ts AS TO_TIMESTAMP_LTZ(t, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = '${SQL_DATA}/orders_times.csv',
  'format' = 'csv'
);
CREATE TABLE shipments (
  sid INT,
  order_id INT,
  t BIGINT,
  ts AS TO_TIMESTAMP_LTZ(t, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = '${SQL_DATA}/shipments_times.csv',
  'format' = 'csv'
);
SELECT o.id, s.sid
FROM orders AS o LEFT JOIN shipments AS s
ON o.id = s.order_id AND s.ts BETWEEN o.ts AND o.ts + INTERVAL '2' SECOND;
