#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The configuration files (clusterdoc(1), CONFIGURATION; cli/settings.h) on a namespace cluster
# of real sshd nodes: the nodes, the login, the transport and a timeout come from a file alone;
# `clusterdoc config` says where each setting comes from; -O and the command line win; each
# bad file (an unknown key, a bad value, a loop of includes, a line that is not one) is an
# error naming the file, the line and the value, and no SSH handshake reaches any node.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=config

# The user's file, as the head sees it (HOME=$CD_HOME): ~/.config/clusterdoc/config.
user_cfg() { printf '%s/.config/clusterdoc/config\n' "$CD_HOME"; }

# cfg_write FILE LINES...: the file, one line per argument
cfg_write() {
	local f=$1
	shift
	mkdir -p "$(dirname "$f")" && printf '%s\n' "$@" >"$f"
}

# cdx [VAR=VALUE]... ARGS...: clusterdoc in the head namespace with those variables; sets $out,
# $err, $rc, $elapsed_ms (as cd_head)
cdx() {
	local envs=() t0 ef
	while [[ ${1:-} == [A-Z]*=* ]]; do
		envs+=("$1")
		shift
	done
	ef=$(mktemp)
	t0=$(date +%s%N)
	out=$(cluster_head_exec env CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "${envs[@]}" "$CLUSTERDOC" "$@" 2>"$ef")
	rc=$?
	elapsed_ms=$((($(date +%s%N) - t0) / 1000000))
	err=$(cat "$ef")
	rm -f "$ef"
	itest_json_keep "$@" # its JSON against docs/schema/ (itest.sh)
}

# The agent's cached copy on node I in the home of USER: proof of the login it ran as.
agent_in_home_of() { # I USER
	local sha home=/home/$2
	[[ $2 == root ]] && home=/root
	sha=$(sha256sum "$CLUSTERDOC_AGENT" | cut -c1-64)
	cluster_node_exec "$1" test -x "$home/.cache/clusterdoc/agent-$sha"
}

t_cluster_up() {
	CD_QUIET=1 cluster_up 3 --users >/dev/null || return 1
	# a node whose sshd never answers, by an alias of the user's ssh_config
	{
		printf 'Host silent\n  HostName node3\n  Port 2222\n\n'
		cat "$CD_SSH_CONFIG"
	} >"$CD_SSH_CONFIG.new" && mv "$CD_SSH_CONFIG.new" "$CD_SSH_CONFIG"
	cluster_node_silent 3 2222
	CFG=$CD_RUN/cfg
	mkdir -p "$CFG"
}

t_facts_takes_its_nodes_login_and_transport_from_the_config_alone() {
	cfg_write "$(user_cfg)" "# the user's defaults" "nodes = node[1-2]" "login = cdplain" "ssh = openssh"
	cdx facts --json
	rm -f "$(user_cfg)"
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(jget '[n["hostname"] for n in d["nodes"]]')" "['node1', 'node2']" "hostnames" || return 1
	expect_eq "$(jget '[n["transport"] for n in d["nodes"]]')" "['openssh', 'openssh']" "transports" || return 1
	agent_in_home_of 1 cdplain || { echo "    no agent in node1's /home/cdplain: not logged in as cdplain"; return 1; }
	agent_in_home_of 2 cdplain || { echo "    no agent in node2's /home/cdplain: not logged in as cdplain"; return 1; }
}

t_a_timeout_from_the_config_is_the_deadline_the_nodes_get() {
	cfg_write "$CFG/timeout" "nodes = silent" "auth-timeout = 1"
	cdx CLUSTERDOC_CONFIG="$CFG/timeout" facts --json
	expect_eq "$rc" 2 "exit status" || return 1
	expect_eq "$(jget 'd["nodes"][0]["error_code"]')" handshake-timeout "error_code" || return 1
	((elapsed_ms < 5000)) || { echo "    took ${elapsed_ms} ms: the 1 s of the file was not the deadline (default 10 s)"; return 1; }
}

t_a_named_group_of_the_config_is_a_node_group_for_w() {
	cfg_write "$(user_cfg)" "[groups]" "pair = node[1-2]" "all = @pair,node3"
	cdx facts -w @pair --json
	expect_eq "$rc" 0 "exit status of -w @pair ($err)" || return 1
	expect_eq "$(jget '[n["hostname"] for n in d["nodes"]]')" "['node1', 'node2']" "@pair" || return 1
	cdx nodeset -f @config:all -x @pair
	rm -f "$(user_cfg)"
	expect_eq "$rc" 0 "exit status of nodeset ($err)" || return 1
	expect_eq "$out" "node3" "@config:all less @pair (a group naming another)"
}

t_the_command_line_and_minus_o_win_over_the_files() {
	cfg_write "$(user_cfg)" "nodes = node[1-2]" "login = cdplain"
	cfg_write "$CFG/env" "nodes = node1"
	# $CLUSTERDOC_CONFIG over the user's file
	cdx CLUSTERDOC_CONFIG="$CFG/env" facts --json
	expect_eq "$(jget '[n["host"] for n in d["nodes"]]')" "['node1']" "\$CLUSTERDOC_CONFIG's nodes" || return 1
	# -O over $CLUSTERDOC_CONFIG
	cdx CLUSTERDOC_CONFIG="$CFG/env" facts -O nodes=node2 --json
	expect_eq "$(jget '[n["host"] for n in d["nodes"]]')" "['node2']" "-O's nodes" || return 1
	# the command line's -w and -l over -O and every file; --hostfile replaces nodes too
	cdx CLUSTERDOC_CONFIG="$CFG/env" facts -O nodes=node2 -w node1 -l root --json
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$(jget '[n["host"] for n in d["nodes"]]')" "['node1']" "-w's nodes" || return 1
	printf 'node2\n' >"$CFG/hosts"
	cdx facts --hostfile "$CFG/hosts" --login root --json
	expect_eq "$(jget '[n["host"] for n in d["nodes"]]')" "['node2']" "--hostfile's nodes" || return 1
	printf 'node2 gpu\nnode3 cpu\n' >"$CFG/genders"
	cdx CLUSTERDOC_GENDERS="$CFG/genders" facts -g gpu --login root --json
	rm -f "$(user_cfg)"
	expect_eq "$(jget '[n["host"] for n in d["nodes"]]')" "['node2']" "-g's nodes" || return 1
	agent_in_home_of 1 root || { echo "    -l root did not win over login = cdplain"; return 1; }
}

t_the_user_file_is_under_xdg_config_home_when_it_is_set() {
	cfg_write "$CFG/xdg/clusterdoc/config" "nodes = node2"
	cfg_write "$(user_cfg)" "nodes = node1"
	cdx XDG_CONFIG_HOME="$CFG/xdg" facts --json
	expect_eq "$(jget '[n["host"] for n in d["nodes"]]')" "['node2']" "with \$XDG_CONFIG_HOME" || return 1
	# a relative one is ignored, as the XDG base directory specification says
	cdx XDG_CONFIG_HOME=relative facts --json
	rm -f "$(user_cfg)"
	expect_eq "$(jget '[n["host"] for n in d["nodes"]]')" "['node1']" "with a relative \$XDG_CONFIG_HOME"
}

t_a_command_section_holds_for_that_command_alone() {
	cfg_write "$CFG/section" "nodes = node1" "[facts]" "nodes = node2" "[check]" "nodes = node3"
	cdx CLUSTERDOC_CONFIG="$CFG/section" facts --json
	expect_eq "$(jget '[n["host"] for n in d["nodes"]]')" "['node2']" "facts' nodes" || return 1
	# another command's section is not facts'
	cfg_write "$CFG/section" "nodes = node1" "[check]" "nodes = node3"
	cdx CLUSTERDOC_CONFIG="$CFG/section" facts --json
	expect_eq "$(jget '[n["host"] for n in d["nodes"]]')" "['node1']" "the top nodes, with only [check]'s"
}

# The keys are the command table's long options, never a second list: every long option a
# command's --help lists is a key, but --help and the actions and consents below, and no other
# key than those is one.
t_every_long_option_of_every_commands_help_is_a_key_but_the_actions() {
	local actions=" --help --apply --yes --undo --list --sudoers --fix --force --run --drain --undrain --slurm-prolog --local --node --watch --expand --fold --count --all --verbose --version "
	local c o keys listed=" " bad=
	cdx config --all --json
	keys=" $(jget '" ".join(sorted(set(s["key"] for s in d["settings"])))') "
	for c in $("$CLUSTERDOC" --help | awk '/^Commands:/ { on = 1; next } on && !NF { exit } on { print $1 }'); do
		for o in $("$CLUSTERDOC" "$c" --help | grep -oE '^ {1,8}(-[a-zA-Z]( [A-Z]+)?, )?--[a-z0-9-]+' | grep -oE -- '--[a-z0-9-]+$' | sort -u); do
			listed+=" ${o#--} "
			[[ $keys == *" ${o#--} "* || $actions == *" $o "* ]] || bad+=" $c $o: no key;"
			# an action is no key (check's --count, with --watch, is one: nodeset's is not)
			[[ $actions == *" $o "* && $keys == *" ${o#--} "* && $o != --count ]] && bad+=" $c $o: a key;"
		done
	done
	[[ -z $bad ]] || { echo "   $bad"; return 1; }
	# and nothing else: the keys not listed are long names --help gives by their short form
	# (bench's -b, -e, -f: nccl-tests' --minbytes, --maxbytes, --stepfactor)
	for o in $keys; do
		[[ $listed == *" $o "* ]] || bad+=" $o"
	done
	expect_eq "$bad" " maxbytes minbytes stepfactor" "keys no --help lists by their long name"
}

t_config_prints_each_setting_with_the_file_and_line_it_comes_from() {
	cfg_write "$CFG/system" "fanout = 8" "ssh = openssh" "[check]" "expect-gpus = 8"
	cfg_write "$(user_cfg)" "" "fanout = 16" "[groups]" "gpu = node[1-2]"
	cfg_write "$CFG/env" "include env.d" "timeout = 45"
	cfg_write "$CFG/env.d" "login = cdadmin"
	cdx CLUSTERDOC_SYSTEM_CONFIG="$CFG/system" CLUSTERDOC_CONFIG="$CFG/env" SLURM_JOB_NODELIST='n[1-3]' \
		config -O login=cdplain
	local want
	want="# system $CFG/system
# user $(user_cfg)
# \$CLUSTERDOC_CONFIG $CFG/env
# \$CLUSTERDOC_CONFIG $CFG/env.d
$(printf '%-40s# %s\n' "ssh = openssh" "$CFG/system:2" "fanout = 16" "$(user_cfg):2" \
		"timeout = 45" "$CFG/env:2" "login = cdplain" "-O" "nodes = n[1-3]" "environment (\$SLURM_JOB_NODELIST)")
$(printf '%-39s # %s' "agent = $CLUSTERDOC_AGENT" "environment (\$CLUSTERDOC_AGENT)")
[check]
$(printf '%-40s# %s' "expect-gpus = 8" "$CFG/system:4")
[groups]
$(printf '%-40s# %s' "gpu = node[1-2]" "$(user_cfg):4")"
	expect_eq "$rc" 0 "exit status ($err)" || return 1
	expect_eq "$out" "$want" "the text" || return 1
	cdx CLUSTERDOC_SYSTEM_CONFIG="$CFG/system" CLUSTERDOC_CONFIG="$CFG/env" config -O login=cdplain --json
	rm -f "$(user_cfg)"
	expect_eq "$(jget '[(s["section"], s["key"], s["value"], s["source"], s.get("line")) for s in d["settings"]]')" \
		"[('', 'ssh', 'openssh', 'file', 2), ('check', 'expect-gpus', '8', 'file', 4), ('', 'fanout', '16', 'file', 2), ('groups', 'gpu', 'node[1-2]', 'file', 4), ('', 'timeout', '45', 'file', 2), ('', 'login', 'cdplain', '-O', None), ('', 'agent', '$CLUSTERDOC_AGENT', 'environment', None)]" \
		"the JSON's settings" || return 1
	expect_eq "$(jget '[(f["origin"], f["found"]) for f in d["files"]]')" \
		"[('system', True), ('user', True), ('\$CLUSTERDOC_CONFIG', True), ('\$CLUSTERDOC_CONFIG', True)]" "the JSON's files"
}

t_config_refuses_a_value_the_command_that_takes_it_would_refuse() {
	cfg_write "$CFG/probe" "fanout = 8" "[check]" "probe-timeout = soon"
	cdx CLUSTERDOC_CONFIG="$CFG/probe" config
	expect_eq "$rc" 2 "exit status" || return 1
	expect_eq "$err" "clusterdoc config: $CFG/probe:3: probe-timeout = soon: --probe-timeout wants a number from 50 to 600000, not \"soon\"" \
		"the error" || return 1
	expect_eq "$out" "" "stdout"
}

# bad_config NAME EXPECTED-ERROR LINES...: facts with that file (its nodes: node[1-2]) exits 2
# with exactly that error, after no SSH handshake with any node
bad_config() {
	local name=$1 want=$2
	shift 2
	cfg_write "$CFG/$name" "nodes = node[1-2]" "$@"
	cluster_ssh_syns_start
	cdx CLUSTERDOC_CONFIG="$CFG/$name" facts --json
	local syns
	syns=$(cluster_ssh_syns)
	cluster_ssh_syns_stop
	expect_eq "$rc" 2 "$name: exit status" || return 1
	expect_eq "$err" "$want" "$name: the error" || return 1
	expect_eq "$out" "" "$name: stdout" || return 1
	expect_eq "$syns" 0 "$name: SSH handshakes with the nodes" || return 1
}

t_an_unknown_key_names_the_file_the_line_and_the_nearest_key_and_nothing_runs() {
	bad_config unknown "clusterdoc facts: $CFG/unknown:3: unknown key \"fanot\"; did you mean fanout?" \
		"# fan-out" "fanot = 4" || return 1
	# an action is no key: a file never applies a fix
	bad_config action "clusterdoc facts: $CFG/action:3: apply is given on the command line only (an action, a consent or a mode), never by a configuration file" \
		"[fix]" "apply = yes"
}

t_a_bad_value_names_the_file_the_line_and_the_value_and_nothing_runs() {
	bad_config fanout "clusterdoc facts: $CFG/fanout:2: fanout = lots: invalid value \"lots\" for -f" \
		"fanout = lots" || return 1
	bad_config ssh "clusterdoc facts: $CFG/ssh:2: ssh = telnet: --ssh takes libssh2 or openssh, not \"telnet\"" \
		"ssh = telnet" || return 1
	bad_config flag "clusterdoc facts: $CFG/flag:2: accept-new = sometimes: the value is yes or no" \
		"accept-new = sometimes" || return 1
	bad_config line "clusterdoc facts: $CFG/line:2: \"ssh openssh\": expected KEY = VALUE, [SECTION] or include FILE" \
		"ssh openssh"
}

t_a_loop_of_includes_names_the_chain_and_nothing_runs() {
	cfg_write "$CFG/loop.d" "include loop"
	bad_config loop "clusterdoc facts: $CFG/loop.d:1: include loop: include loop: $CFG/loop -> $CFG/loop.d -> $CFG/loop" \
		"include loop.d"
}

# A [groups] loop: `clusterdoc config` names it with its chain (exit 2), and so does its use,
# once, instead of a line per level
t_a_loop_of_groups_is_named_with_its_chain_by_config_and_by_its_use() {
	cfg_write "$CFG/gloop" "[groups]" "loop = @loop2" "loop2 = node1,@loop"
	cdx CLUSTERDOC_CONFIG="$CFG/gloop" config
	expect_eq "$rc" 2 "config's exit status" || return 1
	expect_eq "$err" "clusterdoc config: $CFG/gloop:2: @config:loop includes itself: @config:loop -> @config:loop2 -> @config:loop" "config's words" || return 1
	cdx CLUSTERDOC_CONFIG="$CFG/gloop" nodeset -f @loop2
	expect_eq "$rc:$err" "2:clusterdoc nodeset: @config:loop2 includes itself: @config:loop2 -> @config:loop -> @config:loop2" "nodeset's words"
}

t_a_bad_minus_o_names_itself_and_nothing_runs() {
	cluster_ssh_syns_start
	cdx facts -w node1 -O fanout=0 --json
	local syns
	syns=$(cluster_ssh_syns)
	cluster_ssh_syns_stop
	expect_eq "$rc" 2 "exit status" || return 1
	expect_eq "$err" 'clusterdoc facts: -O fanout=0: invalid value "0" for -f' "the error" || return 1
	expect_eq "$syns" 0 "SSH handshakes" || return 1
	cdx facts -w node1 -O fanuot=3
	expect_eq "$err" 'clusterdoc facts: -O fanuot=3: unknown key "fanuot"; did you mean fanout?' "an unknown key"
}

t_a_missing_clusterdoc_config_file_is_an_error() {
	cdx CLUSTERDOC_CONFIG="$CFG/absent" facts -w node1
	expect_eq "$rc" 2 "exit status" || return 1
	expect_match "$err" "^clusterdoc facts: \\\$CLUSTERDOC_CONFIG: .*$CFG/absent" "the error"
}

itest_run_all
