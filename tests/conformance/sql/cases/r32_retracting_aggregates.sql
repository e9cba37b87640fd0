-- A group aggregate over an updating input (another group aggregate): COUNT, COUNT(col), SUM,
-- MIN, MAX, AVG and COUNT(DISTINCT) retracted as keys move between counts, -D when a count's
-- group empties; DECIMAL and DOUBLE AVG.
CREATE VIEW t AS SELECT * FROM (VALUES
  ('a', 5, CAST(1.50 AS DECIMAL(5, 2))), ('b', 3, CAST(2.25 AS DECIMAL(5, 2))), ('a', 7, CAST(NULL AS DECIMAL(5, 2))),
  ('c', 1, CAST(0.10 AS DECIMAL(5, 2))), ('a', 5, CAST(3.00 AS DECIMAL(5, 2))), ('b', 9, CAST(1.00 AS DECIMAL(5, 2))),
  ('d', 4, CAST(2.00 AS DECIMAL(5, 2))), ('c', 2, CAST(NULL AS DECIMAL(5, 2)))
) AS x(k, v, p);
SELECT cnt, COUNT(*) AS keys, SUM(total) AS s, MIN(k) AS first_k, MAX(total) AS mx, AVG(avg_p) AS ap,
  AVG(CAST(total AS DOUBLE)) AS avg_total, COUNT(avg_p) AS with_p, COUNT(DISTINCT total) AS dt
FROM (SELECT k, COUNT(*) AS cnt, SUM(v) AS total, AVG(p) AS avg_p FROM t GROUP BY k)
GROUP BY cnt;
