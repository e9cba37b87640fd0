-- Deduplication on processing time keeping the FIRST row per key (ROW_NUMBER ... ASC = 1):
-- insert-only in streaming.
CREATE VIEW t AS SELECT k, v, PROCTIME() AS pt FROM (VALUES
  ('a', 1), ('b', 2), ('a', 3), ('c', 4), ('b', 5), ('a', 6)
) AS x(k, v);
SELECT k, v FROM (
  SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY pt ASC) AS rn FROM t
) WHERE rn = 1;
