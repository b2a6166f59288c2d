#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run the cmocka unit test binaries given as arguments, CD_TEST_JOBS at a time (default: the
# CPUs + 1; several wait on purpose, for a deadline or a Python child); record one result per
# test case and each binary's duration, the longest first. Each binary's report is printed whole
# when it ends.
source "$(dirname "$0")/lib.sh"
echo "== unit tests"
work=$(mktemp -d /tmp/cd-unit.XXXXXX)
trap 'rm -rf "$work"' EXIT

# run_bin BIN: one binary; its results and, when it failed, its output
run_bin() {
	local bin=$1 name=${1##*/} out rc t0 line
	t0=$(cd_now_ms)
	# into a file, not a pipe: a child the binary leaks cannot hold the runner up
	CMOCKA_MESSAGE_OUTPUT=stdout "$bin" >"$work/$name.out" 2>&1
	rc=$?
	out=$(<"$work/$name.out")
	echo "$(($(cd_now_ms) - t0)) unit/$name" >>"$CD_TIMES"
	echo "$(($(cd_now_ms) - t0)) $name" >>"$work/bin-times"
	{
		flock 9
		# cmocka prints "[       OK ] case" and "[  FAILED  ] case" lines
		while read -r line; do
			case $line in
			"[       OK ] "*) result PASS "$name/${line#\[       OK \] }" ;;
			"[  FAILED  ] "*" test(s), listed below:"*) ;;
			"[  FAILED  ] "*) result FAIL "$name/${line#\[  FAILED  \] }" ;;
			"[  SKIPPED ] "*" test(s), listed below:"*) ;;
			"[  SKIPPED ] "*) result SKIP "$name/${line#\[  SKIPPED \] }" ;;
			esac
		done <<<"$out"
		if [ $rc -ne 0 ]; then
			echo "$name" >>"$work/failed"
			echo "$out" | grep -v '^\[ \(RUN\|       OK\) ' | head -40
			grep -q "^\[  FAILED  \]" <<<"$out" || result FAIL "$name" "exit status $rc"
		fi
	} 9>"$work/print.lock"
}

# The longest binaries first (the last run's durations, build/unit-times.txt, else a full run's
# kept in tests/unit/unit-times.txt for a fresh checkout), so that none that waits long starts last.
BIN_TIMES=$CD_TOP/build/unit-times.txt
ORDER_TIMES=$BIN_TIMES
[[ -s $ORDER_TIMES ]] || ORDER_TIMES=$CD_TOP/tests/unit/unit-times.txt
mapfile -t bins < <(for bin in "$@"; do
	w=$(awk -v b="${bin##*/}" '$2 == b { w = $1 } END { print w + 0 }' "$ORDER_TIMES" 2>/dev/null)
	echo "${w:-0} $bin"
done | sort -rn -s -k1,1 | cut -d' ' -f2-)

jobs=${CD_TEST_JOBS:-$(($(nproc) + 1))}
((jobs >= 1)) || jobs=1
for bin in "${bins[@]}"; do
	# the running binaries counted, not the returns of `wait -n` (see tests/run-integration.sh)
	while (($(jobs -pr | wc -l) >= jobs)); do wait -n; done
	run_bin "$bin" &
done
wait
[[ -s $work/bin-times ]] && sort -rn "$work/bin-times" >"$BIN_TIMES"
[[ ! -s $work/failed ]]
