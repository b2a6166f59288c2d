#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mnist_modes.sh DIR [N] - `clusterdoc mnist` on real MNIST, both modes side by side on the same
# namespace test cluster of N nodes (default 2), 2 epochs, one rank per node: test accuracy,
# seconds per epoch and the whole job, for docs/performance.md.
#
# DIR holds MNIST's four files (raw IDX or .gz; with .gz, DIR/MD5SUMS may give their MD5s, else
# torchvision's are checked). The machine has no route to the mirrors, so the data comes from a
# local copy. Needs root; all traffic stays inside the cluster's namespaces.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
source "$top/tests/cluster/cluster.sh"
CLUSTERDOC=${CLUSTERDOC:-$top/clusterdoc}
export CLUSTERDOC_AGENT=${CLUSTERDOC_AGENT:-$top/clusterdoc-agent}
DIR=${1:?usage: mnist_modes.sh DIR [N]}
N=${2:-2}
[ "$(id -u)" -eq 0 ] || { echo "mnist_modes: needs root" >&2; exit 2; }
md5=()
[[ -f $DIR/MD5SUMS ]] && md5=(--data-md5 "$DIR/MD5SUMS")

CD_QUIET=1 cluster_up "$N" >/dev/null || exit 1
trap cluster_down EXIT
echo "| mode | nodes x ranks | epoch 1 loss | epoch 2 loss | s/epoch (1, 2) | test accuracy | job (s) |"
echo "|---|---|---|---|---|---|---|"
for mode in embedded torch; do
	out=$(cluster_head_exec env CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "$CLUSTERDOC" mnist \
		-w "node[1-$N]" --mode "$mode" --backend gloo --epochs 2 --quiet --json \
		--data-dir "$DIR" "${md5[@]}" 2>/dev/null)
	python3 -c '
import json, sys
d = json.loads(sys.argv[1])
if d["failed"]:
    print("| %s | failed: %s |" % (d["mode"], d["failure"])); sys.exit()
e = d["epochs"]
print("| %s | %d x 1 | %.4f | %.4f | %.1f, %.1f | %.2f%% | %.1f |" % (d["mode"], len(d["nodes"]),
      e[0]["loss"], e[1]["loss"], e[0]["seconds"], e[1]["seconds"],
      100 * d["test"]["accuracy"], d["timing_ms"]["train"] / 1000))' "$out"
done
