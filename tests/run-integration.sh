#!/usr/bin/env bash
# Run every tests/integration/test_*.sh (each brings up its own namespace test
# cluster and tears it down). Needs root for network namespaces; without root
# the integration tests are recorded as skipped.
source "$(dirname "$0")/lib.sh"
echo "== integration tests"
if [ "$(id -u)" -ne 0 ]; then
	result SKIP "integration" "needs root for network namespaces"
	exit 0
fi
status=0
for t in "$CD_TOP"/tests/integration/test_*.sh; do
	bash "$t" || status=1
done
exit $status
