-- FILTER (WHERE ...) on a COUNT(DISTINCT) and on a plain SUM next to an unfiltered
-- COUNT(DISTINCT): streaming keeps the distinct calls in the GroupAggregate, batch rewrites
-- them (Expand and FILTER calls on $e) with the query's own conditions among the columns.
CREATE TABLE events (
  id INT,
  k STRING,
  v INT
) WITH (
  'connector' = 'filesystem',
  'path' = '${SQL_DATA}/events.csv',
  'format' = 'csv'
);
SELECT k, COUNT(DISTINCT v) FILTER (WHERE v > 4) AS big_dv, COUNT(DISTINCT v) AS dv,
  SUM(v) FILTER (WHERE id > 3) AS late_sum
FROM events GROUP BY k;
