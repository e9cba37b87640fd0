-- Filesystem source in json format reading a directory of two files (one split per file).
CREATE TABLE clicks (
  user_name STRING,
  url STRING,
  clicks INT,
  price DOUBLE
) WITH (
  'connector' = 'filesystem',
  'path' = '${SQL_DATA}/clicks',
  'format' = 'json'
);
SELECT user_name, url, clicks * 2 AS double_clicks, price FROM clicks WHERE clicks > 1 OR price IS NULL;
