-- r29 (Top-2 per key over an updating aggregate, one subtask) with a state TTL
-- (table.exec.state.ttl = 1 d): the Rank and the aggregate keep their state with a TTL; the
-- aggregate then re-emits unchanged results.
SET 'parallelism.default' = '1';
SET 'table.exec.state.ttl' = '1 d';
CREATE VIEW t AS SELECT * FROM (VALUES
  ('a', 'x1', 5), ('b', 'y1', 3), ('a', 'x2', 7), ('a', 'x3', 6), ('b', 'y2', 1),
  ('a', 'x4', 9), ('b', 'y3', 4), ('c', 'z1', 2), ('a', 'x1', 4), ('b', 'y2', 6)
) AS x(k, item, v);
SELECT k, item, s, rn FROM (
  SELECT k, item, s, ROW_NUMBER() OVER (PARTITION BY k ORDER BY s DESC) AS rn
  FROM (SELECT k, item, SUM(v) AS s FROM t GROUP BY k, item)
) WHERE rn <= 2;
