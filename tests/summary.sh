#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Print the totals of the last test run, the 10 slowest tests and how long each stage took,
# then reset the results and the durations files.
source "$(dirname "$0")/lib.sh"
p=$(grep -c '^PASS ' "$CD_RESULTS" 2>/dev/null); f=$(grep -c '^FAIL ' "$CD_RESULTS" 2>/dev/null)
s=$(grep -c '^SKIP ' "$CD_RESULTS" 2>/dev/null)
if [[ -s $CD_TIMES ]]; then
	echo "the 10 slowest (a unit binary counts as one):"
	sort -rn "$CD_TIMES" | head -10 | while read -r ms name; do
		printf '  %7s s  %s\n' "$(cd_secs "$ms")" "$name"
	done
fi
if [[ -s $CD_STAGES ]]; then
	printf 'the stages:'
	sep=" "
	while read -r ms name; do
		printf '%s%s %s s' "$sep" "$name" "$(cd_secs "$ms")"
		sep=", "
	done <"$CD_STAGES"
	echo
fi
grep '^FAIL ' "$CD_RESULTS" 2>/dev/null | sed 's/^FAIL /failed: /'
rm -f "$CD_RESULTS" "$CD_TIMES" "$CD_STAGES"
echo "${p:-0} passed, ${f:-0} failed, ${s:-0} skipped"
[ "${f:-0}" -eq 0 ]
