-- Views on views: a filtering view, an aggregating view over it, a query filtering that view.
CREATE TABLE orders (
  id INT,
  k AS CONCAT('k', CAST(id % 4 AS STRING)),
  v AS id * 10
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '16',
  'fields.id.kind' = 'sequence',
  'fields.id.start' = '1',
  'fields.id.end' = '16'
);
CREATE VIEW big_orders AS SELECT id, k, v FROM orders WHERE v > 30;
CREATE TEMPORARY VIEW per_key AS SELECT k, COUNT(*) AS cnt, SUM(v) AS total FROM big_orders GROUP BY k;
SELECT k, cnt, total * 2 AS double_total FROM per_key WHERE k <> 'k0';
