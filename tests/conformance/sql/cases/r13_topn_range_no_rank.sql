-- Top-N keeping ranks 2..3 (ROW_NUMBER() BETWEEN 2 AND 3) without the rank number in the output.
CREATE VIEW t AS SELECT * FROM (VALUES
  ('a', 'x1', 5), ('b', 'y1', 3), ('a', 'x2', 7), ('a', 'x3', 6), ('b', 'y2', 1),
  ('a', 'x4', 9), ('b', 'y3', 4), ('c', 'z1', 2), ('b', 'y4', 8)
) AS x(k, item, v);
SELECT k, item, v FROM (
  SELECT k, item, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v ASC) AS rn FROM t
) WHERE rn BETWEEN 2 AND 3;
