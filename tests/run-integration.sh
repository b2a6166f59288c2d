#!/usr/bin/env bash
# Run every tests/integration/test_*.sh (each brings up its own namespace test
# cluster and tears it down). Needs root for network namespaces; without root
# the integration tests are recorded as skipped.
source "$(dirname "$0")/lib.sh"
echo "== integration tests"
status=0
# The GPU run (tests/gpu/run.sh) needs no root and no cluster: on a machine
# without a GPU it records a SKIP, which proves that it still starts cleanly.
bash "$CD_TOP/tests/gpu/run.sh" || status=1
if [ "$(id -u)" -ne 0 ]; then
	result SKIP "integration" "needs root for network namespaces"
	exit $status
fi
for t in "$CD_TOP"/tests/integration/test_*.sh; do
	bash "$t" || status=1
done
exit $status
