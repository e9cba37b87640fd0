"""Flink SQL: parsing, the catalog, planning and EXPLAIN as Flink 2.3 does them."""
