-- Regular FULL OUTER join: unmatched rows of both sides padded with NULL.
CREATE VIEW orders AS SELECT * FROM (VALUES
  (1, 10, 100), (2, 20, 250), (3, 10, 75), (4, 30, 30), (5, 40, 990), (6, 20, 5)
) AS o(order_id, cust_id, amount);
CREATE VIEW customers AS SELECT * FROM (VALUES
  (10, 'alice'), (20, 'bob'), (30, 'carol'), (50, 'erin')
) AS c(cust_id, name);
SELECT o.order_id, o.cust_id AS o_cust, c.cust_id AS c_cust, c.name
FROM orders AS o FULL OUTER JOIN customers AS c ON o.cust_id = c.cust_id;
