-- Regular RIGHT OUTER join with an extra non-equi condition in ON.
CREATE VIEW orders AS SELECT * FROM (VALUES
  (1, 10, 100), (2, 20, 250), (3, 10, 75), (4, 30, 30), (5, 40, 990), (6, 20, 5)
) AS o(order_id, cust_id, amount);
CREATE VIEW customers AS SELECT * FROM (VALUES
  (10, 'alice'), (20, 'bob'), (30, 'carol'), (50, 'erin')
) AS c(cust_id, name);
SELECT c.name, o.order_id, o.amount FROM orders AS o RIGHT JOIN customers AS c ON o.cust_id = c.cust_id AND o.amount > 50;
