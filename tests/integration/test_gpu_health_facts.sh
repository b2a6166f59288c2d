#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# GPU health in `clusterdoc facts` (issue 35) on a namespace cluster whose nodes load NVML's
# stand-in (tests/fakes/fake_nvml*.c, selected by CLUSTERDOC_NVML_LIB in each node's login
# environment; one scenario file per node in CLUSTERDOC_FAKE_NVML_SCENARIO) and read a kernel log
# of their own (CLUSTERDOC_KMSG):
#   node1  two healthy GPUs, a kernel log without Xid lines;
#   node2  four GPUs, one fault family each (uncorrectable ECC; a pending row remap, an NVLink
#          down and a PCIe link trained down; a GPU lost; NOT_SUPPORTED and another NVML error),
#          and an Xid 79 in its kernel log;
#   node3  an older driver's NVML (no _v3 PCI query, no NUMA node, no remapped rows, no MIG
#          mode, throttle reasons only), a kernel log it may not read and a journalctl that
#          cannot help.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=gpu_health_facts

DIR="" # the stand-ins, scenarios and logs, in the /tmp the nodes share
trap '[[ -n $DIR ]] && rm -rf "$DIR"' EXIT

# The node1 kernel log: /dev/kmsg records (Documentation/ABI/testing/dev-kmsg), no Xid.
KMSG1='6,1201,4012345678,-;mlx5_core 0000:5e:00.0: Port module event: module 0, Cable plugged
6,1202,4012345999,-;nvidia-nvswitch0: open (major=508)
'
# The node2 kernel log: the Xid line of NVIDIA's "XID Errors" document (docs.nvidia.com/deploy/
# xid-errors), with its continuation lines.
KMSG2='6,1201,4012345678,-;mlx5_core 0000:5e:00.0: Port module event: module 0, Cable plugged
4,1202,5123456789,-;NVRM: Xid (PCI:0000:38:00): 79, pid=1234, name=python, GPU has fallen off the bus.
 SUBSYSTEM=pci
 DEVICE=+pci:0000:38:00.0
'

t_setup_cluster_with_the_nvml_stand_in_on_each_node() {
	local i
	make -s -C "$CD_TOP" build/fakes/nvml/libnvidia-ml.so.1 build/fakes/nvml-old/libnvidia-ml.so.1 \
		>/dev/null || return 1
	CD_QUIET=1 cluster_up 3 >/dev/null || return 1
	DIR=$(mktemp -d /tmp/cdgpuhealth.XXXXXX)
	mkdir -p "$DIR/new" "$DIR/old" "$DIR/bin"
	cp "$CD_TOP/build/fakes/nvml/libnvidia-ml.so.1" "$DIR/new/"
	cp "$CD_TOP/build/fakes/nvml-old/libnvidia-ml.so.1" "$DIR/old/"
	printf 'count 2\n' >"$DIR/scenario1"
	cat >"$DIR/scenario2" <<-'END'
		count 4
		gpu 0 ecc.volatile.uncorrected 2
		gpu 1 row_remap.pending on
		gpu 1 nvlink 3 down
		gpu 1 nvlink 3 crc_flit 12
		gpu 1 pcie.width 8
		gpu 1 throttle 0x8
		gpu 2 lost 3
		gpu 3 unsupported row_remap
		gpu 3 error nvmlDeviceGetPowerUsage 4
	END
	# bus 0xfe: no such PCI device in sysfs, so no NUMA node from there either
	printf 'count 2\ngpu 0 error nvmlDeviceGetTemperature 999\ngpu 0 pci.bus 0xfe\n' >"$DIR/scenario3"
	printf '%s' "$KMSG1" >"$DIR/kmsg1"
	printf '%s' "$KMSG2" >"$DIR/kmsg2"
	printf '#!/bin/sh\necho "No journal files were found." >&2\nexit 1\n' >"$DIR/bin/journalctl"
	chmod 755 "$DIR/bin/journalctl" && chmod -R a+rX "$DIR"
	for i in 1 2; do
		cluster_node_env "$i" "export CLUSTERDOC_NVML_LIB=$DIR/new/libnvidia-ml.so.1" \
			"export CLUSTERDOC_FAKE_NVML_SCENARIO=$DIR/scenario$i" \
			"export CLUSTERDOC_KMSG=$DIR/kmsg$i" || return 1
	done
	cluster_node_env 3 "export CLUSTERDOC_NVML_LIB=$DIR/old/libnvidia-ml.so.1" \
		"export CLUSTERDOC_FAKE_NVML_SCENARIO=$DIR/scenario3" \
		"export CLUSTERDOC_KMSG=$DIR/no-such-kmsg" "export PATH=$DIR/bin:\$PATH" \
		"export CLUSTERDOC_NVML_TIMEOUT_MS=1500"
}

# node N's facts (1-based) in the last answer
node() { echo "d['nodes'][$(($1 - 1))]"; }
gpu() { echo "$(node "$1")['gpus'][$2]['health']"; }

t_a_healthy_node_reports_every_health_key_and_no_xid() {
	cd_head facts -w 'node[1-3]' --json
	expect_eq "$(jget "$(node 1)['hostname']")" node1 "first node" || return 1
	expect_eq "$(jget "len($(node 1)['gpus'])")" 2 "node1's GPUs" || return 1
	expect_eq "$(jget "sorted($(gpu 1 1).keys())")" \
		"['clocks_mhz', 'compute_mode', 'ecc', 'errors', 'mig', 'numa_node', 'nvlink', 'pci_bus_id', 'pcie', 'persistence', 'power_limit_w', 'power_w', 'retired_pages', 'row_remap', 'temperature_c', 'temperature_slowdown_c', 'throttle', 'unsupported']" \
		"node1 GPU 1's keys" || return 1
	expect_eq "$(jget "($(gpu 1 1)['unsupported'], $(gpu 1 1)['errors'], $(gpu 1 1)['pci_bus_id'])")" \
		"([], {}, '00000000:28:00.0')" "node1 GPU 1: nothing missing" || return 1
	expect_eq "$(jget "($(node 1)['xid']['source'], $(node 1)['xid']['readable'], $(node 1)['xid']['events'])")" \
		"('kmsg', True, [])" "node1's kernel log" || return 1
	expect_eq "$(jget "sorted($(node 1)['gpu_pci'].keys())")" "['nics', 'nvidia_devices', 'paths']" "gpu_pci"
}

t_each_field_family_lands_on_its_own_gpu_and_node() {
	cd_head facts -w 'node[1-3]' --json
	expect_eq "$(jget "[g['health']['ecc']['volatile']['uncorrected'] for g in $(node 2)['gpus'][:2]]")" \
		"[2, 0]" "node2's uncorrectable ECC on GPU 0 alone" || return 1
	expect_eq "$(jget "[l['link'] for l in $(gpu 2 1)['nvlink'] if not l['up']]")" "[3]" \
		"node2 GPU 1's NVLink down" || return 1
	expect_eq "$(jget "$(gpu 2 1)['nvlink'][3]['crc_flit']")" 12 "its CRC errors" || return 1
	expect_eq "$(jget "($(gpu 2 1)['row_remap']['pending'], $(gpu 2 1)['pcie']['width'], $(gpu 2 1)['pcie']['width_max'])")" \
		"(True, 8, 16)" "node2 GPU 1's remap and PCIe link" || return 1
	expect_eq "$(jget "$(gpu 2 1)['throttle']['reasons']")" "['hw_slowdown']" "node2 GPU 1's clocks" || return 1
	expect_eq "$(jget "[e['xid'], e['pci'], e['time_s']] if (e := $(node 2)['xid']['events'][0]) else 0")" \
		"[79, '0000:38:00', 5123.456789]" "node2's Xid" || return 1
	expect_eq "$(jget "[g['health']['ecc']['volatile']['uncorrected'] for g in $(node 1)['gpus']]")" \
		"[0, 0]" "no ECC error on node1" || return 1
	expect_eq "$(jget "[g['health'].get('row_remap', {}).get('pending') for g in $(node 1)['gpus']]")" \
		"[False, False]" "no remap pending on node1"
}

t_bad_input_is_named_per_gpu_and_the_other_gpus_go_on() {
	cd_head facts -w 'node[1-3]' --json
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(jget "$(gpu 2 2)['errors']['pci_bus_id']")" \
		"nvmlDeviceGetPciInfo: GPU is lost (NVML error 15)" "node2's lost GPU 2" || return 1
	expect_eq "$(jget "$(gpu 2 2)['errors']['mig']")" "not asked: the GPU is lost" "its later queries" || return 1
	expect_eq "$(jget "($(gpu 2 3)['unsupported'], $(gpu 2 3)['errors'])")" \
		"(['row_remap'], {'power_w': 'nvmlDeviceGetPowerUsage: Insufficient Permissions (NVML error 4)'})" \
		"node2 GPU 3's unsupported and failed keys" || return 1
	expect_eq "$(jget "$(gpu 2 3)['power_limit_w']")" 700.0 "node2 GPU 3's other keys" || return 1
	# an older driver: the older versions answer, the missing functions are unsupported
	expect_eq "$(jget "($(gpu 3 0)['unsupported'], $(gpu 3 0)['pci_bus_id'], $(gpu 3 0)['throttle']['mask'])")" \
		"(['numa_node', 'row_remap', 'mig'], '00000000:FE:00.0', '0x0000000000000001')" \
		"node3's older NVML" || return 1
	expect_eq "$(jget "$(gpu 3 0)['errors']")" \
		"{'temperature_c': 'nvmlDeviceGetTemperature: Unknown Error (NVML error 999)'}" \
		"node3 GPU 0's failed query" || return 1
	# a kernel log the user may not read: said, not taken for "no Xid"
	expect_eq "$(jget "($(node 3)['xid']['source'], $(node 3)['xid']['readable'], $(node 3)['xid']['events'])")" \
		"(None, False, [])" "node3's kernel log" || return 1
	expect_match "$(jget "$(node 3)['xid']['why']")" \
		"no-such-kmsg: No such file or directory; journalctl -k exited with status 1: No journal files were found.: the Xid errors are unknown" \
		"why node3's log is unknown"
}

t_the_facts_table_shows_one_health_word_per_node() {
	cd_head facts -w 'node[1-3]'
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_match "$out" ' GPUS HEALTH ' "the column" || return 1
	expect_match "$out" '^node1 .* 2 ok ' "node1" || return 1
	expect_match "$out" '^node2 .* 4 lost ' "node2" || return 1
	expect_match "$out" '^node3 .* 2 1 err ' "node3"
}

# NVML's calls are synchronous and cannot be cut: the agent asks them in a child process, each
# GPU under a deadline (node3's: 1.5 s, CLUSTERDOC_NVML_TIMEOUT_MS), so a query that never returns
# costs its GPU, named with the query, and not the node's facts; the finding is gpu-missing ("does
# not answer"). The head's request deadline is never reached.
t_a_hung_nvml_query_names_its_gpu_and_query_and_the_node_still_answers() {
	local t0 elapsed_ms
	cp "$DIR/scenario3" "$DIR/scenario3.saved"
	printf 'gpu 1 hang nvmlDeviceGetPowerUsage 60\n' >>"$DIR/scenario3"
	t0=$(date +%s%N)
	cd_head facts -w 'node[1-3]' -t 10 --json
	elapsed_ms=$((($(date +%s%N) - t0) / 1000000))
	mv "$DIR/scenario3.saved" "$DIR/scenario3"
	expect_eq "$(jget "[n['error_code'] for n in d['nodes']]")" "[None, None, None]" \
		"the nodes' answers ($err)" || return 1
	expect_eq "$(jget "$(gpu 3 1)['errors']['power_w']")" \
		"nvmlDeviceGetPowerUsage: no answer within 1 s" "node3's GPU 1" || return 1
	expect_eq "$(jget "int($(gpu 3 0)['power_w'])")" 75 "node3's GPU 0, asked before" || return 1
	expect_eq "$(jget "$(node 3)['hostname']")" node3 "node3's other facts" || return 1
	((elapsed_ms < 9000)) || { echo "    took $elapsed_ms ms"; return 1; }
	cp "$DIR/scenario3" "$DIR/scenario3.saved"
	printf 'gpu 1 hang nvmlDeviceGetPowerUsage 60\n' >>"$DIR/scenario3"
	cd_head check -w 'node[1-3]' --json
	mv "$DIR/scenario3.saved" "$DIR/scenario3"
	expect_eq "$(jget '[e for f in d["findings"] if f["id"] == "gpu-missing" for e in f["evidence"] if e.startswith("node3")]')" \
		"['node3/gpu1: NVML does not answer for the GPU: nvmlDeviceGetPowerUsage: no answer within 1 s']" \
		"the check's finding"
}

itest_need_root
itest_run_all
