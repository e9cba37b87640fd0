-- An aggregate's own FILTER (WHERE ...): COUNT(*) and SUM on the same condition share one
-- boolean column of the aggregate's input, MAX on another condition gets its own; the csv
-- table's columns are nullable, so each condition is planned as IS TRUE(...).
CREATE TABLE events (
  id INT,
  k STRING,
  v INT
) WITH (
  'connector' = 'filesystem',
  'path' = '${SQL_DATA}/events.csv',
  'format' = 'csv'
);
SELECT k, COUNT(*) FILTER (WHERE v > 4) AS big_n, SUM(v) FILTER (WHERE v > 4) AS big_sum,
  MAX(id) FILTER (WHERE id < 7) AS early_top, COUNT(*) AS n
FROM events GROUP BY k;
