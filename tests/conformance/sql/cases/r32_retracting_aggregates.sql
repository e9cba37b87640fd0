-- A group aggregate over an updating input (another group aggregate): COUNT(*), SUM, MIN of a
-- string, MAX and COUNT(DISTINCT) retracted as keys move between counts, -D when a count's
-- group empties.
CREATE TABLE events (
  id INT,
  k STRING,
  v INT
) WITH (
  'connector' = 'filesystem',
  'path' = '${SQL_DATA}/events.csv',
  'format' = 'csv'
);
SELECT cnt, COUNT(*) AS keys, SUM(total) AS s, MIN(k) AS first_k, MAX(total) AS mx, COUNT(DISTINCT total) AS dt
FROM (SELECT k, COUNT(*) AS cnt, SUM(v) AS total FROM events GROUP BY k)
GROUP BY cnt;
