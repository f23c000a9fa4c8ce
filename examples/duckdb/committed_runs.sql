-- Read only committed runs of a databrew-stage export with DuckDB.
--
-- A run is committed when its folder (or key prefix) holds _SUCCESS; on a
-- local folder a run's files appear all at once, but in object storage a
-- run's parts can be listed before its _SUCCESS is written (and a logical
-- run of shards completes its shards' parts one after another), so
-- readers join the parts to the _SUCCESS markers. A run of shards keeps
-- its part files one level down, in shard=I-of-N/ folders: the ** glob
-- reads both layouts. Hive partitioning is off because the two layouts
-- have different partition keys (with it on, a mixed export fails with
-- "Hive partition mismatch", and an export of one layout gets dt and run
-- twice); dt and run come from each file's path instead. union_by_name
-- keeps a field added to the config later (otherwise the first file's
-- columns win). Replace out/books with the export root
-- (s3://lake/exports/books works too, with httpfs loaded).
WITH committed AS (
    SELECT regexp_replace(file, '/_SUCCESS$', '') AS run_dir
    FROM glob('out/books/dt=*/run=*/_SUCCESS')
)
SELECT p.* EXCLUDE (filename),
       regexp_extract(p.filename, '/dt=([^/]*)/', 1) AS dt,
       regexp_extract(p.filename, '/run=([^/]*)/', 1) AS run
FROM read_parquet('out/books/dt=*/run=*/**/*.parquet', filename = true,
                  hive_partitioning = false, union_by_name = true) AS p
JOIN committed AS c ON regexp_extract(p.filename, '^(.*/run=[^/]*)/', 1) = c.run_dir
-- Each item's latest row: the export holds only new, changed and removed
-- items per run, so the current catalog is the last change of each key.
QUALIFY row_number() OVER (PARTITION BY p._key ORDER BY p._fetched_at DESC) = 1
    AND p._change <> 'removed';
