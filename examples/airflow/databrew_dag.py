"""Run databrew-stage nightly from Airflow, two ways: pick one.

Each task below is a complete way to run the config; do not run both, as
they keep separate states and would each export every change. Written
for Airflow 3, and for Airflow 2.10 through the fallback imports.

BashOperator: the binary is on the worker. `--json` makes the last stdout
line the verdict, which BashOperator pushes as the task's XCom; exit code
99 (`--exit-unproductive 99`: the run succeeded but found nothing new)
marks the task skipped, so downstream tasks do not rebuild on an unchanged
export; exit 1 (a failed run, nothing published) fails the task.

KubernetesPodOperator: the stage runs in its own pod. `--xcom-file`
writes the verdict where the operator's sidecar reads it, also when the
run fails. The state lives on a persistent volume claim, so each night's
pod resumes the last one's state.

`{{ ds }}` is the run's logical date: `--partition-date` puts the export
under dt={{ ds }}, so a backfill or a rerun of a day lands in that day's
partition. The date is a label: a backfill crawls the site as it is now.
"""

import pendulum
from kubernetes.client import models as k8s

try:  # Airflow 3
    from airflow.sdk import DAG
except ImportError:  # Airflow 2.10
    from airflow import DAG
try:  # Airflow 3, or Airflow 2 with the standard provider
    from airflow.providers.standard.operators.bash import BashOperator
except ImportError:  # Airflow 2
    from airflow.operators.bash import BashOperator
from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator

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
        bash_command=(
            "databrew-stage run --json --exit-unproductive 99 "
            "--partition-date {{ ds }} /opt/databrew/configs/books.toml"
        ),
        skip_on_exit_code=99,
        do_xcom_push=True,  # the last stdout line: the verdict
    )

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
        do_xcom_push=True,
        skip_on_exit_code=99,
        container_resources=k8s.V1ResourceRequirements(limits={"memory": "128Mi"}),
    )

    # Two alternatives, not a chain: keep the one that fits and delete the
    # other.
