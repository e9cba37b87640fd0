-- Type derivation: CASE WHEN, string functions, DECIMAL and DOUBLE literals, implicit casts,
-- integer division and NULL handling in one projection.
CREATE VIEW t AS SELECT * FROM (VALUES
  (1, 'Alpha ', 10, CAST(2.50 AS DECIMAL(5, 2))),
  (2, ' beta', -3, CAST(NULL AS DECIMAL(5, 2))),
  (3, 'Gamma', 7, CAST(0.10 AS DECIMAL(5, 2))),
  (4, CAST(NULL AS STRING), 0, CAST(12.00 AS DECIMAL(5, 2)))
) AS x(id, name, n, price);
SELECT
  id,
  CASE WHEN n > 5 THEN 'big' WHEN n > 0 THEN 'small' ELSE 'none' END AS size_class,
  CASE WHEN price IS NULL THEN 0 ELSE n END AS n_or_zero,
  UPPER(TRIM(name)) AS up,
  CHAR_LENGTH(name) AS len,
  SUBSTRING(TRIM(name), 2, 3) AS mid,
  CONCAT_WS('-', name, CAST(id AS STRING)) AS tagged,
  n * 1.5 AS dec_mul,
  n / 4 AS int_div,
  n / 4.0 AS dec_div,
  n * 0.5e0 AS dbl_mul,
  price * n + 0.005 AS price_expr,
  price / 3 AS price_div,
  id + 2147483647 AS int_overflow,
  CAST(id AS BIGINT) + 2147483647 AS big_sum,
  COALESCE(price, 1) * 2 AS price_or_one
FROM t;
