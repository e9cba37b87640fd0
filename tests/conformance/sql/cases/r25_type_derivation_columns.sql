-- r15's expressions over columns of a CSV file (DECIMAL and DOUBLE columns, 'null' as the null
-- literal), so that they are computed in a Calc at run time instead of folded by the planner.
CREATE TABLE t (
  id INT,
  name STRING,
  n INT,
  price DECIMAL(5, 2),
  rate DOUBLE
) WITH (
  'connector' = 'filesystem',
  'path' = '${SQL_DATA}/typed.csv',
  'format' = 'csv',
  'csv.null-literal' = 'null'
);
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
  price * rate AS dec_times_double,
  rate + n AS double_plus_int,
  id + 2147483647 AS int_overflow,
  CAST(id AS BIGINT) + 2147483647 AS big_sum,
  COALESCE(price, 1) * 2 AS price_or_one,
  ROUND(price / 7, 2) AS rounded,
  n % 3 AS modulo,
  IF(rate > 1, 'hi', 'lo') AS rate_class
FROM t WHERE id <> 3 OR rate IS NULL;
