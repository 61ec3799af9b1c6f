-- PostgreSQL leaves room on each page of incidents and pages for their updates; SQLite's
-- b-trees have no such setting.
SELECT 1;
