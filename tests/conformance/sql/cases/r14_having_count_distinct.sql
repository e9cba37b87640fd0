-- GROUP BY with HAVING and COUNT(DISTINCT) in streaming: the HAVING filter drops some of the
-- aggregate's update rows, so a key's first visible change can be an update.
CREATE VIEW t AS SELECT * FROM (VALUES
  ('a', 5), ('b', 3), ('a', 7), ('c', 1), ('a', 5), ('b', 3), ('c', 4), ('a', 2), ('d', 8)
) AS x(k, v);
SELECT k, COUNT(DISTINCT v) AS dv, COUNT(*) AS c, SUM(v) AS s FROM t GROUP BY k HAVING COUNT(*) >= 2 AND SUM(v) > 5;
