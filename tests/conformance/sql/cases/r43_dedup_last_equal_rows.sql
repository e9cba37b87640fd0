-- Processing-time deduplication keeping the last row per key, one subtask, with rows equal to
-- the kept one: without a state TTL Flink sends no -U/+U for a row equal to the kept row.
SET 'parallelism.default' = '1';
CREATE VIEW t AS SELECT k, v, PROCTIME() AS pt FROM (VALUES
  ('a', 1), ('b', 2), ('a', 1), ('a', 3), ('b', 2), ('a', 3), ('a', 1)
) AS x(k, v);
SELECT k, v FROM (
  SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY pt DESC) AS rn FROM t
) WHERE rn = 1;
