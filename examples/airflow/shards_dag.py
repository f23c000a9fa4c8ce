"""Run one logical databrew-stage run as SHARDS parallel tasks, then commit it.

Each mapped task `crawl_books_shard[i]` runs shard i of SHARDS: it walks
every listing and sitemap, fetches only the item pages whose URL hashes to
i, and stages its part file in the lake without completing it. Its delay
per host is the config's delay times SHARDS, so the site sees the
configured rate in total when all shards run at once. A shard exits 0 when
its verdict is success or partial, 1 when it failed. Written for Airflow
3, and for Airflow 2.10 through the fallback imports.

`commit_books` runs once every shard passed (trigger_rule all_success): it
completes the shards' uploads and writes `_manifest.json`, then
`_SUCCESS`, under dt={{ ds }}/run={{ ts_nodash }}/. Until then no reader
sees any of the run's rows. A shard that fails is retried by Airflow with
the same run id: it stages its work anew (what the failed attempt staged
goes once the run is committed). Clearing a
failed shard task later (with its downstream commit) completes the run the
same way; a second commit of a committed run is a no-op and exits 0. A
shard of a run that is committed already does nothing and exits 1: clearing
a whole DAG run to crawl again needs a new run id (trigger a new DAG run).

Every task of one DAG run must pass the same `--run-id`: `{{ ts_nodash }}`
is the logical date without punctuation, which a retry or a cleared task
sees again unchanged. Do not pass the raw `{{ run_id }}`: its `:` and `+`
are not allowed in a run id.

Each shard keeps its state in `<storage>/shard-i-of-SHARDS`, so the
config's storage path must be on a file system every worker that may run
a shard sees (or route these tasks to one worker with `queue=`).
Changing SHARDS between runs is refused by the stage: see "Changing the shard
count" in docs/shards.md.

`--json` makes the last stdout line the verdict, which BashOperator pushes
as the task's XCom: each shard's own verdict, and the commit's combined
verdict (the shards' verdicts are inside it under "shards").
"""

from datetime import timedelta

import pendulum

try:  # Airflow 3
    from airflow.sdk import DAG
except ImportError:  # Airflow 2.10
    from airflow import DAG
try:  # Airflow 3, or Airflow 2 with the standard provider
    from airflow.providers.standard.operators.bash import BashOperator
except ImportError:  # Airflow 2
    from airflow.operators.bash import BashOperator

SHARDS = 4  # the one place the shard count is set
CONFIG = "/opt/databrew/configs/books.toml"
RUN_ID = "{{ ts_nodash }}"  # one logical run: the same in every shard and in the commit

with DAG(
    dag_id="databrew_books_shards",
    schedule="0 2 * * *",
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,  # one logical run at a time: shard i of two runs would share a state folder
    tags=["databrew-stage"],
) as dag:
    shards = BashOperator.partial(
        task_id="crawl_books_shard",
        retries=2,
        retry_delay=timedelta(minutes=5),
        do_xcom_push=True,  # the last stdout line: this shard's verdict
    ).expand(
        bash_command=[
            f"databrew-stage run {CONFIG} --shard {i}/{SHARDS} --run-id {RUN_ID} "
            "--partition-date {{ ds }} --json"
            for i in range(SHARDS)
        ],
    )

    commit = BashOperator(
        task_id="commit_books",
        bash_command=(
            f"databrew-stage commit {CONFIG} --run-id {RUN_ID} --shards {SHARDS} --json"
        ),
        trigger_rule="all_success",  # only once every shard passed
        retries=2,
        retry_delay=timedelta(minutes=5),
        do_xcom_push=True,  # the combined verdict
    )

    shards >> commit
