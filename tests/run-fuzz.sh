#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run-fuzz.sh smoke|long FUZZER...
#   smoke: replay each harness's seed corpus (tests/fuzz/corpus/<name>/) once (the
#          harnesses linked with tests/fuzz/replay.c; REPLAY_SELFTEST: its self-test).
#   long:  fuzz each harness for $FUZZ_SECONDS, starting from a copy of the corpus.
source "$(dirname "$0")/lib.sh"
mode=$1; shift
status=0
echo "== fuzz ($mode)"
# The replay driver fails on an input that breaks its harness, as libFuzzer does: each
# file of tests/fuzz/replay-selftest/ but "fine" breaks replay_selftest.c on purpose.
if [[ $mode == smoke && -n ${REPLAY_SELFTEST:-} ]]; then
	for input in "$CD_TOP"/tests/fuzz/replay-selftest/*; do
		{ "$REPLAY_SELFTEST" -runs=0 "$input" >/dev/null 2>&1; } 2>/dev/null
		rc=$?
		name=fuzz/replay/${input##*/}
		[[ ${input##*/} == fine ]] && name+=_passes || name+=_fails
		case ${input##*/}:$rc in
		fine:0 | read_one_past_the_input:[1-9]* | abort:[1-9]*) result PASS "$name" ;;
		*) result FAIL "$name" "the replay exited $rc"; status=1 ;;
		esac
	done
fi
for bin in "$@"; do
	name=$(basename "$bin")
	corpus=$CD_TOP/tests/fuzz/corpus/${name#fuzz_}
	if [ ! -d "$corpus" ]; then
		result FAIL "fuzz/$name" "no seed corpus at $corpus"; status=1; continue
	fi
	if [ "$mode" = smoke ]; then
		if out=$("$bin" -runs=0 "$corpus" 2>&1); then
			result PASS "fuzz/$name/seed-corpus"
		else
			result FAIL "fuzz/$name/seed-corpus"; echo "$out" | tail -30; status=1
		fi
	else
		work=$(mktemp -d); cp -r "$corpus"/. "$work"/
		if "$bin" -max_total_time="${FUZZ_SECONDS:-30}" -max_len=4096 "$work" \
			-artifact_prefix="$CD_TOP/build/fuzz/$name-" 2>&1 | tail -5; then
			result PASS "fuzz/$name/${FUZZ_SECONDS:-30}s"
		else
			result FAIL "fuzz/$name"; status=1
		fi
		rm -rf "$work"
	fi
done
exit $status
