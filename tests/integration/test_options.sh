#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The command table (cli/command.h) and its option groups (cli/optgroups.h): every command that takes an option of a group parses it
# the same way, with the same bounds and the same error. Only the head runs: no cluster, no
# nodes are reached (each case fails, or is taken, before any connection).
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=options

# opt CMD ARGS...: run the head with a node that is never reached; sets rc and err
opt() {
	err=$(CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "$CLUSTERDOC" "$@" -w node1 2>&1 >/dev/null </dev/null)
	rc=$?
}

t_a_port_above_65525_is_refused_by_every_command_that_takes_the_check_port() {
	# the check also listens on port+10
	local cmd
	for cmd in check env fix tui; do
		opt "$cmd" --port 65530
		expect_eq "$rc" 2 "$cmd --port 65530: exit status" || return 1
		expect_eq "$err" "clusterdoc $cmd: --port wants a number from 1 to 65525, not \"65530\"" \
			"$cmd --port 65530: error" || return 1
	done
}

t_expect_gpus_is_taken_by_check_env_fix_and_tui_from_1_to_1024() {
	local cmd
	for cmd in check env fix tui; do
		opt "$cmd" --expect-gpus 0
		expect_eq "$rc" 2 "$cmd --expect-gpus 0: exit status" || return 1
		expect_eq "$err" "clusterdoc $cmd: --expect-gpus wants a number from 1 to 1024, not \"0\"" \
			"$cmd --expect-gpus 0: error" || return 1
	done
	opt tui --expect-gpus 8
	expect_match "$err" 'the TUI needs a terminal' "tui --expect-gpus 8: taken"
}

t_check_takes_dcgm_level_1_or_2_only() {
	opt check --dcgm-level 3
	expect_eq "$rc" 2 "check --dcgm-level 3: exit status" || return 1
	expect_eq "$err" 'clusterdoc check: --dcgm-level wants a number from 1 to 2, not "3"' \
		"check --dcgm-level 3: error"
}

t_the_tui_takes_port_65525_like_check() {
	opt tui --port 65525
	expect_eq "$rc" 2 "exit status" || return 1
	expect_match "$err" 'the TUI needs a terminal' "the error after the options were taken"
}

t_bench_minus_f_is_the_size_factor_and_fanout_the_fan_out() {
	opt bench -f 1
	expect_eq "$err" 'clusterdoc bench: -f wants a number from 2 to 1048576, not "1"' "-f 1" || return 1
	opt bench --stepfactor 1
	expect_eq "$err" 'clusterdoc bench: -f wants a number from 2 to 1048576, not "1"' "--stepfactor 1" || return 1
	opt bench --fanout 0
	expect_eq "$err" 'clusterdoc bench: invalid value "0" for -f' "--fanout 0 (the targets' error)" || return 1
	opt check --fanout 0
	expect_eq "$err" 'clusterdoc check: invalid value "0" for -f' "check --fanout 0"
}

t_the_bench_sizes_are_checked_alike_in_bench_and_the_tui() {
	opt bench -b 1M -e 1K
	expect_eq "$err" 'clusterdoc bench: -b is larger than -e' "bench" || return 1
	opt tui --bench-min 1M --bench-max 1K
	expect_eq "$err" 'clusterdoc tui: --bench-min is larger than --bench-max' "tui" || return 1
	opt bench --iters 1000001
	expect_eq "$err" 'clusterdoc bench: --iters wants a number from 1 to 1000000, not "1000001"' "bench --iters" || return 1
	opt tui --bench-iters 1000001
	expect_eq "$err" 'clusterdoc tui: --bench-iters wants a number from 1 to 1000000, not "1000001"' "tui --bench-iters"
}

t_the_job_options_are_checked_alike_in_mnist_and_the_tui() {
	local cmd
	for cmd in mnist tui; do
		opt "$cmd" --mode fast
		expect_eq "$err" "clusterdoc $cmd: --mode is torch, embedded or auto" "$cmd --mode" || return 1
		opt "$cmd" --epochs 101
		expect_eq "$err" "clusterdoc $cmd: --epochs wants a number from 1 to 100, not \"101\"" "$cmd --epochs" || return 1
	done
}

# An abbreviated long option is an error naming it and what it may have meant, never taken as
# the option it starts (getopt_long's prefix match read --master node2 as --master-port node2)
t_an_abbreviated_long_option_is_an_error_not_a_guess() {
	err=$(CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "$CLUSTERDOC" run -w 'node[1-4]' --mast node2 --dry-run -- x.py 2>&1 >/dev/null </dev/null)
	rc=$?
	expect_eq "$rc" 2 "run --mast: exit status" || return 1
	expect_eq "$err" "clusterdoc run: unknown option --mast; did you mean --master or --master-port?" "run --mast: error" || return 1
	# --master is an option of its own: a node that is not one of the nodes is named
	err=$(CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "$CLUSTERDOC" run -w 'node[1-4]' --master node9 --dry-run -- x.py 2>&1 >/dev/null </dev/null)
	rc=$?
	expect_eq "$rc" 2 "run --master node9: exit status" || return 1
	expect_eq "$err" "clusterdoc run: --master node9 is not one of the nodes given with -w (or --hostfile)" "run --master node9: error" || return 1
	opt mnist --master-p 29501
	expect_eq "$rc" 2 "mnist --master-p: exit status" || return 1
	expect_eq "$err" "clusterdoc mnist: unknown option --master-p; did you mean --master-port?" "mnist --master-p: error" || return 1
	opt check --prot 29500
	expect_eq "$rc" 2 "check --prot: exit status" || return 1
	expect_eq "$err" "clusterdoc check: unknown option --prot; did you mean --port or --prom?" "check --prot: error" || return 1
	err=$("$CLUSTERDOC" nodeset --fol 'node[1-3]' 2>&1 >/dev/null)
	rc=$?
	expect_eq "$rc" 2 "nodeset --fol: exit status" || return 1
	expect_eq "$err" "clusterdoc nodeset: unknown option --fol; did you mean --fold?" "nodeset --fol: error"
}

t_a_long_option_in_full_and_what_follows_a_double_dash_are_taken() {
	err=$("$CLUSTERDOC" nodeset --fold 'node[1-3]' 2>&1)
	expect_eq "$err" "node[1-3]" "nodeset --fold" || return 1
	opt check --port=65530
	expect_eq "$err" "clusterdoc check: --port wants a number from 1 to 65525, not \"65530\"" "check --port=VALUE reaches its parser" || return 1
	# the script's own --master after -- is the script's: the run reaches its plan (nothing runs)
	err=$(CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "$CLUSTERDOC" run -w node1 --master-port 0 -- x.py --master node2 2>&1 >/dev/null </dev/null)
	expect_match "$err" "--master-port wants a number" "run's own option before --, the script's after"
}

# The nodes take a kill grace of at most 600 s: more is refused on the head, before anything
# starts, not by every node at its start (fault-run-3 case 21)
t_a_kill_grace_above_600_seconds_is_refused_on_the_head_before_anything_starts() {
	err=$(CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "$CLUSTERDOC" run -w node1 --kill-grace 100000 -- x.py 2>&1 >/dev/null </dev/null)
	rc=$?
	expect_eq "$rc" 2 "run --kill-grace 100000: exit status" || return 1
	expect_eq "$err" 'clusterdoc run: --kill-grace wants a number from 0 to 600, not "100000"' \
		"run --kill-grace 100000: error" || return 1
	err=$(CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "$CLUSTERDOC" run -w node1 --kill-grace 600 --dry-run -- x.py 2>&1 >/dev/null </dev/null)
	if grep -q -- --kill-grace <<<"$err"; then
		echo "    expected run --kill-grace 600 to be taken, got: $err"
		return 1
	fi
}

# mpi-check's n x n matrix: more nodes than it takes are refused before anything is allocated,
# and fewer than two distinct nodes have no pair to check (fault-run-3 case 16)
t_mpi_check_refuses_too_many_nodes_and_fewer_than_two_distinct_ones() {
	local w
	err=$(CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "$CLUSTERDOC" mpi-check -w 'n[1-100000]' 2>&1 >/dev/null </dev/null)
	rc=$?
	expect_eq "$rc" 2 "100000 nodes: exit status" || return 1
	expect_eq "$err" "clusterdoc mpi-check: 100000 nodes: at most 512 at once (every node logs in to every other); check a part of them with -w" \
		"100000 nodes: error" || return 1
	for w in node1 node1,node1; do
		err=$(CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "$CLUSTERDOC" mpi-check -w "$w" 2>&1 >/dev/null </dev/null)
		rc=$?
		expect_eq "$rc" 2 "-w $w: exit status" || return 1
		expect_eq "$err" "clusterdoc mpi-check: node-to-node SSH needs at least two distinct nodes, not 1: node1" \
			"-w $w: error" || return 1
	done
}

# Every long option a command's --help lists is in the man page (docs/clusterdoc.1), so the
# two cannot drift apart: --help is printed from the option tables.
t_every_option_a_commands_help_lists_is_in_the_man_page() {
	local man c o missing=
	man=$(sed 's/\\-/-/g; s/\\f[BIRP]//g' "$CD_TOP/docs/clusterdoc.1")
	for c in facts check env fix bench mnist run hang mpi-check tui nodeset; do
		for o in $("$CLUSTERDOC" "$c" --help 2>&1 | grep -oE '^ +(-[a-zA-Z], )?--[a-z0-9-]+' | grep -oE -- '--[a-z0-9-]+' | sort -u); do
			grep -q -- "$o" <<<"$man" || missing+=" $c $o;"
		done
	done
	[[ -z $missing ]] || { echo "    not in docs/clusterdoc.1:$missing"; return 1; }
}

# The commands of `clusterdoc --help` (the command table), one per line.
commands() {
	"$CLUSTERDOC" --help | sed -n '/^Commands:/,/^$/p' | awk 'NF > 1 { print $1 }'
}

# Every option that takes a number, a size, seconds or a port, in every command's --help (the
# command table, cli/command.h), refuses a word: exit 2 before any node is reached, and the
# error names the command and the option. The TUI's run line reads the job's options through
# the same group and loop (tests/unit/test_runopt.c holds their bounds).
t_every_option_with_a_number_of_every_command_refuses_a_word_and_names_the_option() {
	local c line o tried=0 bad=
	for c in $(commands); do
		while read -r o; do
			[[ -n $o ]] || continue
			opt "$c" "$o" x
			tried=$((tried + 1))
			# the targets name the fan-out and the timeout by their short names
			local named=$o
			[[ $o == --fanout ]] && named=-f
			[[ $o == --timeout ]] && named=-t
			if [[ $rc != 2 || $err != "clusterdoc $c: "* || $err != *"$named"* ]]; then
				bad+=$'\n'"    $c $o x: exit $rc: $err"
			fi
		done < <("$CLUSTERDOC" "$c" --help 2>&1 |
			grep -oE -- '(^| )(-[a-zA-Z]|--[a-z0-9-]+) (N|S|MS|SIZE|PORT|MIB|GBPS|LO-HI)( |,|$)' |
			awk '{ print $1 }' | sed 's/,$//' | sort -u)
	done
	[[ -z $bad ]] || { echo "    refused badly:$bad"; return 1; }
	((tried >= 40)) || { echo "    only $tried options with a number found in the --help texts"; return 1; }
}

# The man page's synopsis (docs/clusterdoc.1) is tested against the command table: every
# command has its lines there, and every option a synopsis line names is one the command takes.
t_the_man_pages_synopsis_names_every_command_and_only_options_they_take() {
	local man c o help bad=
	man=$(sed -n '/^\.SH SYNOPSIS/,/^\.SH /p' "$CD_TOP/docs/clusterdoc.1" | sed 's/\\-/-/g')
	for c in $(commands); do
		grep -q "^\.B clusterdoc $c\b" <<<"$man" || { bad+=" $c: no synopsis;"; continue; }
		help=$("$CLUSTERDOC" "$c" --help 2>&1)
		for o in $(awk -v c="$c" '/^\.B clusterdoc( |$)/ { on = ($3 == c) } on' <<<"$man" |
			grep -oE -- '(^| |\[)--?[a-z][a-z0-9-]*' | grep -oE -- '--?[a-z][a-z0-9-]*' | sort -u); do
			grep -qE -- "(^| )$o( |,|$)" <<<"$help" || bad+=" $c $o;"
		done
	done
	[[ -z $bad ]] || { echo "    synopsis and commands differ:$bad"; return 1; }
}

itest_run_all
