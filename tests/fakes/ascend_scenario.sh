# SPDX-License-Identifier: MIT
# tests/fakes/ascend_scenario.sh - sourced by the npu-smi and hccn_tool stand-ins:
# reads the scenario file named by $CD_FAKE_ASCEND (one "key=value" per line, '#' comments) into
# the associative array SC. Keys (all optional):
#   npus=8                    devices on this server (0..npus-1)
#   model=910B3  version=23.0.3  firmware=7.1.0.5.220  health.N=OK|Warning|Alarm|Critical
#   ip.N=ADDR/NETMASK         device N's address (hccn_tool -ip -g)
#   link.N=UP|DOWN            (default UP)
#   net_health.N=TEXT         forces -net_health -g (default: Success toward a reachable
#                             detect address, "Receive timeout" toward one in unreach=, Init
#                             before any -netdetect -s)
#   unreach=A B ...           detect addresses the device cannot reach
#   tls.N=0|1                 tls switch (default 1)
#   lldp.N=PORT               the switch port LLDP names (default 100GE1/0/N)
#   mode=hang|garbage|absent  every call sleeps (hang), prints an unknown format
#                             (garbage) or fails as when the tool is not installed (absent);
#   mode.npu-smi=, mode.hccn_tool=   the same for one tool only
# State (the detect address of -netdetect -s) lives in $CD_FAKE_ASCEND.state.N.
declare -A SC=()
if [[ -n ${CD_FAKE_ASCEND:-} && -r $CD_FAKE_ASCEND ]]; then
	while IFS= read -r _l || [[ -n $_l ]]; do
		[[ -z $_l || $_l == \#* || $_l != *=* ]] && continue
		SC[${_l%%=*}]=${_l#*=}
	done <"$CD_FAKE_ASCEND"
fi

# fake_mode TOOL: hang, garbage, absent or normal
fake_mode() {
	local m=${SC[mode.$1]:-${SC[mode]:-normal}}
	case $m in
	hang) exec sleep 3600 ;;
	absent) echo "$1: error while loading shared libraries: libdrvdsmi_host.so: cannot open shared object file: No such file or directory" >&2; exit 127 ;;
	garbage) echo "dcmi model initialized failed, because the device is used. ret is -8020"; exit 0 ;;
	esac
}
