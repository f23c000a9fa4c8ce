"""Run databrew-stage nightly from Airflow, two ways: pick one.

Each crawl task below is a complete way to run the config; do not run
both, as they keep separate states and would each export every change.
Written for Airflow 3, and for Airflow 2.10 through the fallback imports.

BashOperator: the binary is on the worker. `--json` makes the last stdout
line the verdict, which BashOperator pushes as the task's XCom; exit code
99 (`--exit-unproductive 99`: the run succeeded but found nothing new)
marks the task skipped, so downstream tasks do not rebuild on an unchanged
export; exit 1 (a failed run, nothing published) fails the task, and a
failed task pushes no XCom.

KubernetesPodOperator: the stage runs in its own pod. `--xcom-file`
writes the verdict where the operator's sidecar reads it, also when the
run fails; the operator pushes it as the task's XCom when the pod
succeeds, and also when it fails from apache-airflow-providers-cncf-
kubernetes 10.6.0 on (older versions push nothing for a failed pod). The
state lives on a persistent volume claim, so each night's pod resumes the
last one's state.

Each crawl task has a `*_failed` task downstream (trigger_rule
"one_failed"): it runs only when the crawl failed, reads the failed
run's verdict (from the crawl's XCom, or from .last_run.json in the
config's storage path when the crawl pushed none), pushes it as its own
XCom "verdict" and fails with its outcome, stop and detail, so the DAG
run fails saying why. Send the verdict to your alerting there. When the
crawl succeeded or was skipped, it is skipped. See README.md beside this
file for what each task sees for each exit code.

`{{ ds }}` is the run's logical date: `--partition-date` puts the export
under dt={{ ds }}, so a backfill or a rerun of a day lands in that day's
partition. The date is a label: a backfill crawls the site as it is now.
"""

import json

import pendulum
from kubernetes.client import models as k8s

try:  # Airflow 3
    from airflow.sdk import DAG, task
except ImportError:  # Airflow 2.10
    from airflow import DAG
    from airflow.decorators import task
try:  # Airflow 3, or Airflow 2 with the standard provider
    from airflow.providers.standard.operators.bash import BashOperator
except ImportError:  # Airflow 2
    from airflow.operators.bash import BashOperator
from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator

CONFIG = "/opt/databrew/configs/books.toml"
# .last_run.json in the config's storage path: the verdict of the last run
# that started, written also when it failed.
LAST_RUN = "/var/lib/databrew/books/.last_run.json"


def verdict_line(verdict):
    """One line of a verdict: config, outcome, stop, detail, export error."""
    line = f"{verdict.get('config')}: {verdict.get('outcome')} ({verdict.get('stop')}): {verdict.get('detail')}"
    export = verdict.get("export") or {}
    if export.get("failed"):
        line += f"; the export failed: {export.get('reason')}"
    return line


def fail_with_verdict(ti, crawl, last_run=None, no_verdict=""):
    """Fail with the verdict of the crawl task `crawl`, which failed.

    The verdict is the crawl's XCom when it pushed one (a dict, or the JSON
    text BashOperator pushes), else the file `last_run` when given. It is
    pushed as this task's XCom "verdict" before the task fails.
    """
    verdict, source = ti.xcom_pull(task_ids=crawl), f"the XCom of {crawl}"
    if isinstance(verdict, str):
        verdict = json.loads(verdict)
    if verdict is None and last_run:
        try:
            with open(last_run, encoding="utf-8") as f:
                verdict = json.load(f)
        except FileNotFoundError:
            pass
        else:
            # On an exit 2 nothing ran: the file is an earlier run's.
            source = f"{last_run} (the last run that started, at {verdict.get('started_at')})"
    if verdict is None:
        raise RuntimeError(
            f"{crawl} failed and left no verdict: it exited 2 (a usage or config error:"
            f" nothing ran), was killed, or never started{no_verdict}; its log says which"
        )
    ti.xcom_push(key="verdict", value=verdict)
    raise RuntimeError(f"{crawl} failed; its verdict, from {source}: {verdict_line(verdict)}")


with DAG(
    dag_id="databrew_books",
    schedule="0 2 * * *",
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,  # one run at a time per storage path
    tags=["databrew-stage"],
) as dag:
    crawl_on_worker = BashOperator(  # the binary on the worker
        task_id="crawl_books",
        bash_command="databrew-stage run --json --exit-unproductive 99 --partition-date {{ ds }} " + CONFIG,
        skip_on_exit_code=99,
        do_xcom_push=True,  # the last stdout line: the verdict
    )

    @task(trigger_rule="one_failed", retries=0)
    def crawl_books_failed(ti=None):
        # A failed BashOperator pushes no XCom: the verdict is in the
        # storage path, which this worker sees as the crawl's did.
        fail_with_verdict(ti, "crawl_books", last_run=LAST_RUN)

    crawl_on_worker >> crawl_books_failed()

    state = k8s.V1Volume(
        name="databrew-state",
        persistent_volume_claim=k8s.V1PersistentVolumeClaimVolumeSource(claim_name="databrew-state"),
    )
    config = k8s.V1Volume(
        name="databrew-config",
        config_map=k8s.V1ConfigMapVolumeSource(name="databrew-books"),  # see examples/kubernetes
    )
    crawl_in_pod = KubernetesPodOperator(  # or: the stage in a pod of its own
        task_id="crawl_books_pod",
        name="databrew-books",
        image="registry.example.com/databrew-stage:latest",
        cmds=["databrew-stage"],
        arguments=[
            "run",
            "--partition-date", "{{ ds }}",
            "--xcom-file", "/airflow/xcom/return.json",
            "--exit-unproductive", "99",
            "/etc/databrew/books.toml",
        ],
        volumes=[state, config],
        volume_mounts=[
            k8s.V1VolumeMount(name="databrew-state", mount_path="/var/lib/databrew"),
            k8s.V1VolumeMount(name="databrew-config", mount_path="/etc/databrew", read_only=True),
        ],
        env_from=[k8s.V1EnvFromSource(secret_ref=k8s.V1SecretEnvSource(name="databrew-s3"))],
        do_xcom_push=True,  # /airflow/xcom/return.json: the verdict
        skip_on_exit_code=99,
        container_resources=k8s.V1ResourceRequirements(limits={"memory": "128Mi"}),
    )

    @task(trigger_rule="one_failed", retries=0)
    def crawl_books_pod_failed(ti=None):
        # The pod's state volume is not mounted here: the verdict comes
        # from the XCom the operator pushes for a failed pod.
        fail_with_verdict(
            ti,
            "crawl_books_pod",
            no_verdict=", or the cncf.kubernetes provider is older than 10.6.0 and pushed"
            " no XCom for the failed pod (the export root's _verdict.json has the verdict)",
        )

    crawl_in_pod >> crawl_books_pod_failed()

    # Two alternatives, not a chain: keep the one that fits (with its
    # *_failed task) and delete the other.
