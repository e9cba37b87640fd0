-- r43 with a state TTL (table.exec.state.ttl = 1 d): the deduplication keeping the last row
-- then sends -U/+U for a row equal to the kept one too (to refresh it downstream).
SET 'parallelism.default' = '1';
SET 'table.exec.state.ttl' = '1 d';
CREATE VIEW t AS SELECT k, v, PROCTIME() AS pt FROM (VALUES
  ('a', 1), ('b', 2), ('a', 1), ('a', 3), ('b', 2), ('a', 3), ('a', 1)
) AS x(k, v);
SELECT k, v FROM (
  SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY pt DESC) AS rn FROM t
) WHERE rn = 1;
