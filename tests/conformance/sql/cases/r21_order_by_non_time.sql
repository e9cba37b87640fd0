-- ORDER BY a non-time column without LIMIT: a batch query; streaming mode rejects it.
CREATE VIEW t AS SELECT * FROM (VALUES
  ('a', 5), ('b', 3), ('c', 7), ('d', 1), ('e', 9)
) AS x(k, v);
SELECT k, v FROM t ORDER BY v DESC;
