#!/usr/bin/env bash
# A nightly crawl from cron, with jq on the verdict. Crontab line:
#
#   0 2 * * *  /opt/databrew/nightly.sh /opt/databrew/configs/books.toml >> /var/log/databrew.log 2>&1
#
# The stage's exit code says whether to build on the export: 0 a run that
# succeeded (or was partial), 99 one that succeeded with nothing new
# (--exit-unproductive 99), 1 a failed run, which published nothing. The
# last stdout line (--json) is the verdict.
set -uo pipefail

config=${1:?usage: nightly.sh CONFIG}
stage=${DATABREW_STAGE:-databrew-stage}

# With pipefail, the substitution's status is the stage's exit code.
verdict=$("$stage" run --json --exit-unproductive 99 "$config" | tail -n 1)
code=$?

case $code in
0)
	path=$(jq -r '.export.path' <<<"$verdict")
	rows=$(jq -r '.export.rows' <<<"$verdict")
	echo "published $rows rows to $path"
	# Build downstream here, e.g.: duckdb -c "$(cat committed_runs.sql)"
	;;
99)
	echo "nothing new: $(jq -r '"\(.items.unchanged) unchanged, \(.items.skipped) skipped"' <<<"$verdict")"
	;;
*)
	reason=$(jq -r '"\(.stop): \(.detail)"' <<<"$verdict" 2>/dev/null)
	echo "the crawl failed (exit $code): ${reason:-no verdict, see the log}" >&2
	exit 1
	;;
esac
