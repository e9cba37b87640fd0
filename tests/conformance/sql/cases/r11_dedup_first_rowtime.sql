-- Deduplication on event time keeping the FIRST row per key, over a CSV file with a rowtime
-- column computed from the id and a watermark (one file: one split, ascending rows).
CREATE TABLE events (
  id INT,
  k STRING,
  v INT,
  ts AS TO_TIMESTAMP_LTZ(CAST(id AS BIGINT) * 1000, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = '${SQL_DATA}/events.csv',
  'format' = 'csv'
);
SELECT k, id, v, ts FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts ASC) AS rn FROM events
) WHERE rn = 1;
