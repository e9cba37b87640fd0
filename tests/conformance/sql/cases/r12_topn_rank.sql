-- Top-N with RANK(): ties share a rank, so a rank bound of 2 can keep more than two rows.
CREATE VIEW t AS SELECT * FROM (VALUES
  ('a', 'x1', 5), ('b', 'y1', 3), ('a', 'x2', 7), ('a', 'x3', 7), ('b', 'y2', 1),
  ('a', 'x4', 9), ('b', 'y3', 3), ('c', 'z1', 2), ('a', 'x5', 1)
) AS x(k, item, v);
SELECT k, item, v, r FROM (
  SELECT k, item, v, RANK() OVER (PARTITION BY k ORDER BY v DESC) AS r FROM t
) WHERE r <= 2;
