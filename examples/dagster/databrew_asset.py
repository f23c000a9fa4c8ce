"""A Dagster asset materialized by databrew-stage, which speaks Dagster Pipes.

The stage reads the asset key and the partition key from the Pipes context
(a daily partition key becomes the export's dt=), sends its warnings as
logs, reports a materialization only when a run published (metadata: rows,
new, changed, removed, path, run id, files; data version: the run id), and
always reports the asset check "verdict", which fails when the run failed.

This asset plays Dagster's side of Pipes itself rather than through
PipesSubprocessClient, for two reasons read in Dagster's source:

- PipesSubprocessClient.run raises on a nonzero exit inside its session, so
  a failed crawl's verdict check and its metadata never reach Dagster;
- open_pipes_session (which the client uses) makes an asset yield every
  output, and PipesSession.get_results adds a materialization the stage
  did not report, so a night with nothing new would still look like new
  data to every asset downstream (output_required=False does not help
  under Pipes: dagster-io/dagster#28491).

So run_stage below passes the context and the messages file as Pipes does
(base64(zlib(JSON)) in DAGSTER_PIPES_CONTEXT and DAGSTER_PIPES_MESSAGES),
waits for the stage, then yields exactly what it reported, the check in
every case and the materialization only when it published, and fails the
step unless the stage exited 0. With output_required=False, a night with
nothing new records the passing check and no materialization. See
README.md beside this file for what Dagster records for each exit code.
"""

import base64
import json
import os
import signal
import subprocess
import tempfile
import zlib

import dagster as dg

# The config is named like the asset ("books"): the stage reports to the
# asset key named like the config.
CONFIG = "configs/books.toml"

# Pipes metadata types the stage sends, and Dagster's values for them.
METADATA = {
    "int": dg.MetadataValue.int,
    "float": dg.MetadataValue.float,
    "text": dg.MetadataValue.text,
    "bool": dg.MetadataValue.bool,
    "path": dg.MetadataValue.path,
    "json": dg.MetadataValue.json,
    "url": dg.MetadataValue.url,
    "md": dg.MetadataValue.md,
}


def pipes_param(value):
    """A Pipes bootstrap parameter: JSON, compressed with zlib, in base64."""
    return base64.b64encode(zlib.compress(json.dumps(value).encode("utf-8"))).decode("ascii")


def pipes_metadata(params):
    """The metadata of a report, as Dagster metadata values."""
    out = {}
    for name, value in (params.get("metadata") or {}).items():
        kind = METADATA.get(value.get("type"))
        out[name] = kind(value["raw_value"]) if kind else value["raw_value"]
    return out


def run_stage(context, args, timeout_after_signal=60):
    """Run `databrew-stage ARGS` under Dagster Pipes.

    Yields what the stage reported for this step's assets, in its order (a
    materialization, then the verdict check), and then raises
    dagster.Failure unless the stage exited 0.
    """
    with tempfile.TemporaryDirectory() as tmp:
        messages = os.path.join(tmp, "messages.jsonl")
        pipes_context = {
            "asset_keys": [key.to_user_string() for key in context.selected_asset_keys],
            "partition_key": context.partition_key if context.has_partition_key else None,
            "partition_key_range": None,
            "partition_time_window": None,
            "run_id": context.run.run_id,
            "job_name": context.job_name,
            "retry_number": context.retry_number,
            "code_version_by_asset_key": None,
            "provenance_by_asset_key": None,
            "extras": {},
        }
        env = {
            **os.environ,
            "DAGSTER_PIPES_CONTEXT": pipes_param({"data": pipes_context}),
            "DAGSTER_PIPES_MESSAGES": pipes_param({"path": messages}),
        }
        stage = subprocess.Popen(["databrew-stage", *args], env=env)
        try:
            code = stage.wait()
        except BaseException:
            # The run is being terminated: stop the crawl as a SIGTERM does
            # (what it stored stays pending, its verdict files are written).
            stage.send_signal(signal.SIGTERM)
            try:
                stage.wait(timeout=timeout_after_signal)
            except subprocess.TimeoutExpired:
                stage.kill()
            raise

        results, summary, closed = [], None, False
        lines = []
        if os.path.exists(messages):
            with open(messages, encoding="utf-8") as f:
                lines = f.read().splitlines()
        for line in lines:
            try:
                message = json.loads(line)
            except ValueError:
                continue  # a line cut short by a kill
            method, params = message.get("method"), message.get("params") or {}
            if method == "closed":
                closed = True
            elif method == "log":
                log = {"ERROR": context.log.error, "WARNING": context.log.warning}
                log.get(params.get("level"), context.log.info)(params.get("message", ""))
            elif method == "report_asset_materialization":
                version = params.get("data_version")
                results.append(
                    dg.MaterializeResult(
                        asset_key=dg.AssetKey.from_user_string(params["asset_key"]),
                        metadata=pipes_metadata(params),
                        data_version=dg.DataVersion(version) if version else None,
                    )
                )
            elif method == "report_asset_check":
                summary = (params.get("metadata") or {}).get("summary", {}).get("raw_value")
                results.append(
                    dg.AssetCheckResult(
                        asset_key=dg.AssetKey.from_user_string(params["asset_key"]),
                        check_name=params["check_name"],
                        passed=params["passed"],
                        severity=dg.AssetCheckSeverity(params.get("severity", "ERROR")),
                        metadata=pipes_metadata(params),
                    )
                )

    yield from results

    if lines and not closed:
        context.log.warning("databrew-stage did not close its Pipes session: it was stopped mid-run")
    if code == 1:
        raise dg.Failure(
            description=f"databrew-stage exited 1: {summary or 'a run failed'}",
            metadata={"exit_code": 1},
        )
    if code == 2:
        raise dg.Failure(
            description="databrew-stage exited 2: a usage or config error, nothing ran"
            " (its stderr, in this step's logs, says why)",
            metadata={"exit_code": 2},
        )
    if code < 0:
        raise dg.Failure(
            description=f"databrew-stage was killed by signal {-code}",
            metadata={"exit_code": code},
        )
    if code != 0:
        raise dg.Failure(description=f"databrew-stage exited {code}", metadata={"exit_code": code})
    if not any(isinstance(r, dg.AssetCheckResult) for r in results):
        raise dg.Failure(
            description="databrew-stage reported no verdict for this asset:"
            " name the config like the asset key"
        )


@dg.asset(
    partitions_def=dg.DailyPartitionsDefinition(start_date="2026-01-01"),
    check_specs=[dg.AssetCheckSpec(name="verdict", asset="books", blocking=True)],
    output_required=False,  # no materialization when the stage published nothing
)
def books(context: dg.AssetExecutionContext):
    yield from run_stage(context, ["run", CONFIG])


defs = dg.Definitions(assets=[books])
