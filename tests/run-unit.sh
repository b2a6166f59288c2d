#!/usr/bin/env bash
# Run the cmocka unit test binaries given as arguments; record one result per test case.
source "$(dirname "$0")/lib.sh"
status=0
echo "== unit tests"
for bin in "$@"; do
	name=$(basename "$bin")
	out=$(CMOCKA_MESSAGE_OUTPUT=stdout "$bin" 2>&1)
	rc=$?
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
		status=1
		echo "$out" | grep -v '^\[ \(RUN\|       OK\) ' | head -40
		grep -q "^\[  FAILED  \]" <<<"$out" || result FAIL "$name" "exit status $rc"
	fi
done
exit $status
