#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The TUI's Bench view runs `clusterdoc gpu-burn` (b), driven through tmux on a namespace cluster
# of three real sshd nodes. node1 and node2 put the torch stand-in (tests/fakes/torch: torch's
# documented CUDA API with the timings a scenario file chooses) first on PYTHONPATH, as
# test_gpu_burn.sh does; node3 has only Debian's CPU-only python3-torch. While it runs the view
# shows the stress phase; then (200 columns wide, so that no row wraps) gpu-burn's table: every
# GPU's row, the slow GPU marked SLOW in the warning colour with its gpu-slow line, and node3
# named no-cuda with why. With the stand-in gone, every node is named no-cuda. --read-only
# refuses b as it refuses the bench. The head is the ASan + UBSan build when there is one, and no
# sanitizer may report anything.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
source "$CD_TOP/tests/integration/tui.sh"
ITEST_FILE=tui_gpuburn
DIR=""
SAN_LOG=""
trap 'tui_stop; [[ -n $DIR && -d $DIR ]] && rm -rf "$DIR"; [[ -n $SAN_LOG ]] && rm -rf "$SAN_LOG"' EXIT

# start the TUI on node[1-3] (ARGS... more options), the head the ASan build where there is one
start_tui() {
	local head=$CLUSTERDOC
	[[ -x ${CLUSTERDOC_ASAN:-} ]] && head=$CLUSTERDOC_ASAN
	CLUSTERDOC=$head TUI_SIZE=200x40 tui_start \
		ASAN_OPTIONS="log_path=$SAN_LOG/asan:halt_on_error=1:detect_leaks=1" \
		UBSAN_OPTIONS="log_path=$SAN_LOG/ubsan:halt_on_error=1:print_stacktrace=1" \
		-- tui -w 'node[1-3]' --probe-timeout 1000 "$@" || return 1
	tui_wait 'check done: 3 node\(s\)' 90 || return 1
	tui_keys 5
	tui_wait 'b stresses every GPU of the nodes at once' 5
}

# q (q again while something runs): exit status 0 and no sanitizer report
quit_clean() {
	tui_keys q
	sleep 0.5
	tui_keys q
	tui_ended_clean "$SAN_LOG" || return 1
}

t_setup_a_cluster_of_three_nodes_two_with_the_torch_stand_in() {
	cluster_down
	CD_QUIET=1 cluster_up 3 --subnet 10.97.53 >/dev/null || return 1
	DIR=$(mktemp -d /tmp/cdtuiburn-test.XXXXXX)
	SAN_LOG=$(mktemp -d)
	chmod 755 "$DIR"
	cp -r "$CD_TOP/tests/fakes/torch" "$DIR/stand-in"
	printf '%s\n' "count 2" >"$DIR/node1.scn"
	printf '%s\n' "count 2" "gpu 1 tflops 400" >"$DIR/node2.scn"
	chmod -R a+rX "$DIR"
	for i in 1 2; do
		cluster_node_env "$i" "export PYTHONPATH=$DIR/stand-in" \
			"export CLUSTERDOC_FAKE_TORCH=$DIR/node$i.scn" || return 1
	done
}

t_b_shows_the_stress_then_the_table_with_the_slow_gpu_marked_and_node3_no_cuda() {
	local s version
	version=$(/usr/bin/python3 -c 'import torch; print(torch.__version__)') || return 1
	start_tui || return 1
	tui_keys b
	tui_wait ' phase +stress 10 s on every GPU$' 30 || return 1
	tui_wait 'gpu-burn: stress 10 s on every GPU, [0-9]+ s' 5 || return 1
	tui_wait '^ ?# GPUs: ' 90 || return 1
	s=$(tui_screen)
	expect_match "$s" "^ GPU stress \(gpu-burn\) +done  [0-9.]+ s$" "the title" || return 1
	expect_match "$s" '^ ?# clusterdoc gpu-burn: 10 s on every GPU at once' "the header" || return 1
	for row in "node1 +0 .* ok" "node1 +1 .* ok" "node2 +0 .* ok" "node2 +1  NVIDIA H200 +bf16 +[0-9.]+ +[0-9.]+% +[0-9.]+ +[0-9.]+%  SLOW"; do
		expect_match "$s" "^ +$row$" "the row /$row/" || return 1
	done
	expect_match "$s" "^ +node3 +- .* no-cuda: torch $version has no CUDA \(a CPU-only build: torch\.version\.cuda is None\) \(/usr/bin/python3\)$" \
		"node3 and why" || return 1
	expect_match "$s" '^ ?# gpu-slow node2/gpu1: GPU 1 of node2 \(NVIDIA H200, 00000000:28:00.0\) is more than 10 % below' "the gpu-slow line" || return 1
	expect_match "$s" '^ ?# GPUs: 4 measured, 0 failed, 1 slow; nodes: 3, 1 without a result$' "the summary" || return 1
	# the slow GPU's row and its gpu-slow line in yellow, node3's in red, an ok row in neither
	s=$(tmux_ capture-pane -p -e)
	expect_match "$s" $'\e\\[33m +node2 +1  .*SLOW' "the slow row in the warning colour" || return 1
	expect_match "$s" $'\e\\[33m# gpu-slow node2/gpu1' "the gpu-slow line in the warning colour" || return 1
	expect_match "$s" $'\e\\[31m +node3 +- ' "node3's row in the failure colour" || return 1
	grep -E $'\e\\[3[0-7]m +node1 +0 ' <<<"$s" && { echo "    an ok row is coloured"; return 1; }
	return 0
}

t_with_debians_cpu_only_torch_the_view_names_each_node_no_cuda() {
	local s
	for i in 1 2; do
		cluster_node_env "$i" "unset PYTHONPATH" || return 1
	done
	tui_keys b
	tui_wait 'gpu-burn started on 3 node\(s\)' 10 || return 1
	tui_wait '^ ?# GPUs: 0 measured, 0 failed, 0 slow; nodes: 3, 3 without a result$' 90 || return 1
	s=$(tui_screen)
	expect_match "$s" "^ GPU stress \(gpu-burn\) +FAILED  [0-9.]+ s$" "the title: no GPU measured" || return 1
	for i in 1 2 3; do
		expect_match "$s" "^ +node$i +- .* no-cuda: torch [^ ]+ has no CUDA \(a CPU-only build" "node$i: no-cuda" || return 1
	done
	quit_clean
}

t_read_only_refuses_b_as_it_refuses_the_bench() {
	start_tui --read-only || return 1
	tui_keys b
	tui_wait 'read-only: gpu-burn is not started' 5 || return 1
	expect_match "$(tui_screen)" 'b stresses every GPU of the nodes at once' "the Bench view's text still shows" || return 1
	quit_clean
}

itest_need_root
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
	result SKIP "$ITEST_FILE (Debian's python3-torch is not installed)"
	exit 0
fi
itest_run_all
