"""A Dagster asset materialized by databrew-stage through Dagster Pipes.

PipesSubprocessClient launches the binary with DAGSTER_PIPES_CONTEXT and
DAGSTER_PIPES_MESSAGES set; the stage reads the asset key and partition
key from the context (a daily partition key becomes the export's dt=),
sends its warnings as logs, reports a materialization when a run
published (metadata: rows, new, changed, removed, path, run id, files;
data version: the run id), and always reports the asset check "verdict",
which fails when the run failed. The check is blocking, so a failed crawl
stops the assets downstream.
"""

import shutil

from dagster import (
    AssetCheckSpec,
    AssetExecutionContext,
    DailyPartitionsDefinition,
    Definitions,
    PipesSubprocessClient,
    asset,
)


@asset(
    partitions_def=DailyPartitionsDefinition(start_date="2026-01-01"),
    check_specs=[AssetCheckSpec(name="verdict", asset="books", blocking=True)],
)
def books(context: AssetExecutionContext, pipes_subprocess_client: PipesSubprocessClient):
    command = [shutil.which("databrew-stage") or "databrew-stage", "run", "configs/books.toml"]
    return pipes_subprocess_client.run(command=command, context=context).get_results()


defs = Definitions(
    assets=[books],
    resources={"pipes_subprocess_client": PipesSubprocessClient()},
)
