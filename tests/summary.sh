#!/usr/bin/env bash
# Print the totals of the last test run and reset the results file.
source "$(dirname "$0")/lib.sh"
p=$(grep -c '^PASS ' "$CD_RESULTS" 2>/dev/null); f=$(grep -c '^FAIL ' "$CD_RESULTS" 2>/dev/null)
s=$(grep -c '^SKIP ' "$CD_RESULTS" 2>/dev/null)
grep '^FAIL ' "$CD_RESULTS" 2>/dev/null | sed 's/^FAIL /failed: /'
rm -f "$CD_RESULTS"
echo "${p:-0} passed, ${f:-0} failed, ${s:-0} skipped"
[ "${f:-0}" -eq 0 ]
