-- INSERT INTO a csv filesystem table from a GROUP BY: in streaming the aggregate updates its
-- rows, which an insert-only sink cannot take (Flink names the sink and the node that makes the
-- updates); in batch the aggregate's rows are final and the sink writes them.
SET 'parallelism.default' = '1';
CREATE TABLE events (
  id INT,
  k STRING,
  v INT
) WITH (
  'connector' = 'filesystem',
  'path' = '${SQL_DATA}/events.csv',
  'format' = 'csv'
);
CREATE TABLE per_key (k STRING, n BIGINT, total INT) WITH (
  'connector' = 'filesystem',
  'path' = '${SQL_OUT}/per_key',
  'format' = 'csv'
);
INSERT INTO per_key SELECT k, COUNT(*) AS n, SUM(v) AS total FROM events GROUP BY k;
