-- An unbounded datagen source (rows-per-second, no number-of-rows) with a filter: streaming plans
-- and graphs only (no rows); batch mode rejects the unbounded source.
CREATE TABLE clicks (
  user_id INT,
  url STRING
) WITH (
  'connector' = 'datagen',
  'rows-per-second' = '5',
  'fields.user_id.min' = '1',
  'fields.user_id.max' = '100',
  'fields.url.length' = '8'
);
SELECT user_id, UPPER(url) AS url FROM clicks WHERE user_id > 50;
