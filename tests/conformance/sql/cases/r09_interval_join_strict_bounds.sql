-- Event-time interval join with a strict lower bound and a non-strict upper bound written as
-- two comparisons (s.ts > o.ts - 1 s AND s.ts <= o.ts + 3 s), keys compared through a cast.
CREATE TABLE orders (
  id INT,
  ts AS TO_TIMESTAMP_LTZ(CAST(id AS BIGINT) * 2000, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '10',
  'fields.id.kind' = 'sequence',
  'fields.id.start' = '1',
  'fields.id.end' = '10'
);
CREATE TABLE shipments (
  sid INT,
  order_id AS CAST((sid + 1) / 2 AS BIGINT),
  ts AS TO_TIMESTAMP_LTZ(CAST(sid AS BIGINT) * 1500, 3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '12',
  'fields.sid.kind' = 'sequence',
  'fields.sid.start' = '1',
  'fields.sid.end' = '12'
);
SELECT o.id, s.sid, s.ts AS ship_ts
FROM orders AS o JOIN shipments AS s
ON o.id = s.order_id AND s.ts > o.ts - INTERVAL '1' SECOND AND s.ts <= o.ts + INTERVAL '3' SECOND;
