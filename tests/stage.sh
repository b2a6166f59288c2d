#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# stage.sh [--quiet] NAME CMD...: one stage of `make test`. Runs CMD; a CMD that fails is
# recorded as "FAIL stage/NAME" (the stages after it still run), and the stage's duration as
# "MS NAME" in $CD_STAGES, which tests/summary.sh prints. --quiet: CMD's output goes to
# build/stage-NAME.log and is shown only when it fails (a stage run beside another one).
source "$(dirname "$0")/lib.sh"
quiet=0
[[ $1 == --quiet ]] && { quiet=1; shift; }
name=$1
shift
t0=$(cd_now_ms)
if ((quiet)); then
	log=$CD_TOP/build/stage-$name.log
	"$@" >"$log" 2>&1
	rc=$?
	((rc == 0)) || { echo "== $name failed:"; tail -40 "$log"; }
else
	"$@"
	rc=$?
fi
echo "$(($(cd_now_ms) - t0)) $name" >>"$CD_STAGES"
((rc == 0)) || echo "FAIL stage/$name" >>"$CD_RESULTS"
exit 0
