# SPDX-License-Identifier: MIT
# tests/lib.sh - shared by the test runners. Source it.
# Every result line goes to $CD_RESULTS ("PASS name" / "FAIL name" / "SKIP name")
# and tests/summary.sh prints the totals.
CD_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CD_RESULTS=${CD_RESULTS:-$CD_TOP/build/test-results.txt}
mkdir -p "$(dirname "$CD_RESULTS")"

# Durations: "MS name" lines, one per timed test, beside the results (tests/summary.sh
# prints the slowest).
CD_TIMES=${CD_TIMES:-${CD_RESULTS%.txt}-times.txt}
# The Python the test scripts themselves run (their JSON queries, small helpers): Debian's, by
# its path. The python3 first in PATH may be a version manager's shim (pyenv's costs about 80 ms
# of bash per start), and a suite starts it thousands of times.
CD_PY=/usr/bin/python3
[[ -x $CD_PY ]] || CD_PY=python3

# The stages of `make test` (tests/stage.sh): "MS name" lines.
CD_STAGES=${CD_STAGES:-${CD_RESULTS%.txt}-stages.txt}

result() { # result PASS|FAIL|SKIP name [detail]
	echo "$1 $2" >>"$CD_RESULTS"
	case $1 in
	PASS) printf '  ok    %s\n' "$2" ;;
	FAIL) printf '  FAIL  %s%s\n' "$2" "${3:+: $3}" ;;
	SKIP) printf '  skip  %s%s\n' "$2" "${3:+ ($3)}" ;;
	esac
}

# result_took MS PASS|FAIL|SKIP name [detail]: result, saying how long the test took
result_took() {
	local ms=$1
	shift
	echo "$ms $2" >>"$CD_TIMES"
	result "$@" | sed "1s/\$/  ($(cd_secs "$ms") s)/"
}

# cd_now_ms: the wall clock in milliseconds; cd_secs MS: "12.3"
cd_now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }
cd_secs() { printf '%d.%d' $(($1 / 1000)) $((($1 % 1000) / 100)); }
