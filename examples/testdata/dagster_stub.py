"""Runs the Dagster example's asset once with Dagster stubbed out.

Usage: python3 dagster_stub.py EXAMPLE.py [PARTITION_KEY]

It stands in for the few dagster names the example uses, calls the asset's
function with a context for the asset "books" (and the partition key, if
given), and prints one JSON object: how the asset was declared, what it
yielded, in order, the Failure it raised, if any, and what it logged. The
databrew-stage on PATH is the one the asset runs.
"""

import enum
import inspect
import json
import runpy
import sys
import types

declared = {}


class Failure(Exception):
    def __init__(self, description=None, metadata=None, allow_retries=None):
        super().__init__(description)
        self.description, self.metadata = description, metadata or {}


class AssetKey:
    def __init__(self, path):
        self.path = list(path)

    @staticmethod
    def from_user_string(s):
        return AssetKey(s.split("/"))

    def to_user_string(self):
        return "/".join(self.path)


class AssetCheckSeverity(enum.Enum):
    WARN = "WARN"
    ERROR = "ERROR"


class Value:
    """A metadata value: its type and raw value."""

    def __init__(self, kind, value):
        self.kind, self.value = kind, value


class MetadataValue:
    pass


for _kind in ("int", "float", "text", "bool", "path", "json", "url", "md"):
    setattr(MetadataValue, _kind, staticmethod(lambda v, _k=_kind: Value(_k, v)))


class DataVersion:
    def __init__(self, value):
        self.value = value


def metadata(m):
    return {k: {"type": v.kind, "value": v.value} for k, v in (m or {}).items()}


class MaterializeResult:
    def __init__(self, asset_key=None, metadata=None, data_version=None):
        self.asset_key, self.metadata, self.data_version = asset_key, metadata, data_version

    def record(self):
        return {
            "type": "materialization",
            "asset_key": self.asset_key.to_user_string(),
            "data_version": self.data_version.value if self.data_version else None,
            "metadata": metadata(self.metadata),
        }


class AssetCheckResult:
    def __init__(self, asset_key=None, check_name=None, passed=None, severity=None, metadata=None):
        self.asset_key, self.check_name, self.passed = asset_key, check_name, passed
        self.severity, self.metadata = severity, metadata

    def record(self):
        return {
            "type": "check",
            "asset_key": self.asset_key.to_user_string(),
            "check_name": self.check_name,
            "passed": self.passed,
            "severity": self.severity.value,
            "metadata": metadata(self.metadata),
        }


class AssetCheckSpec:
    def __init__(self, name, asset, blocking=False, **kw):
        self.name, self.asset, self.blocking = name, asset, blocking


class DailyPartitionsDefinition:
    def __init__(self, start_date, **kw):
        self.start_date = start_date


class Definitions:
    def __init__(self, **kw):
        self.kw = kw


def asset(fn=None, **kw):
    def wrap(f):
        declared[f.__name__] = {
            "generator": inspect.isgeneratorfunction(f),
            "output_required": kw.get("output_required", True),
            "checks": [
                {"name": c.name, "asset": c.asset, "blocking": c.blocking}
                for c in kw.get("check_specs", [])
            ],
            "partitioned": "partitions_def" in kw,
        }
        return f

    return wrap(fn) if fn else wrap


logs = []


class Log:
    def __getattr__(self, level):
        return lambda message: logs.append([level, message])


class Run:
    run_id = "dagster-run-1"


class Context:
    def __init__(self, asset_name, partition):
        self.selected_asset_keys = {AssetKey([asset_name])}
        self.has_partition_key = partition is not None
        self._partition = partition
        self.run = Run()
        self.job_name = "__ASSET_JOB"
        self.retry_number = 0
        self.log = Log()

    @property
    def partition_key(self):
        if self._partition is None:
            raise RuntimeError("no partition key")
        return self._partition


dagster = types.ModuleType("dagster")
for _name in (
    "Failure AssetKey AssetCheckSeverity MetadataValue DataVersion MaterializeResult"
    " AssetCheckResult AssetCheckSpec DailyPartitionsDefinition Definitions asset"
).split():
    setattr(dagster, _name, globals()[_name])
dagster.AssetExecutionContext = Context
sys.modules["dagster"] = dagster

g = runpy.run_path(sys.argv[1])
partition = sys.argv[2] if len(sys.argv) > 2 else None
out = {"declared": declared["books"], "results": [], "failure": None, "logs": logs}
try:
    for result in g["books"](Context("books", partition)):
        out["results"].append(result.record())
except Failure as e:
    out["failure"] = {"description": e.description, "metadata": e.metadata}
print(json.dumps(out))
