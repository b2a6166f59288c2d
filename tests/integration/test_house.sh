#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The house as docs/architecture.md draws it, held against the code: every include between
# folders points down the layers the document lists ("Layers"), and the "in" column of its
# module tables says what the links really pull (the agent's link map,
# build/abi/x86_64/agent.map, and the head's, build/head.map); no source file over 800 lines
# (over 700 only with its reason here), no function over 150. No cluster and no root: it reads
# the tree and the maps `make` leaves.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=house
cd "$CD_TOP" || exit 1
DOC=docs/architecture.md

# The folders each folder may include from, besides itself and core/ (docs/architecture.md,
# "Layers"); compat/ is included by no one.
declare -A MAY=(
	[core]=""
	[probes]=""
	[collectives]="probes"
	[hang]="probes"
	[jobs]="collectives probes"
	[fixers]="jobs probes"
	[report]="fixers jobs hang collectives probes"
	[agent]="fixers jobs hang collectives probes"
	[tui]="report fixers jobs hang collectives probes"
	[cli]="tui report fixers jobs hang collectives probes"
)

t_every_include_between_folders_points_down_the_layers() {
	local f from to bad=0
	while IFS=: read -r f _ inc; do
		from=${f%%/*}
		to=$(sed -E 's/.*#include "([a-z]+)\/.*/\1/' <<<"$inc")
		[[ $to == "$from" || $to == core ]] && continue
		[[ -v MAY[$from] ]] || { echo "    $f: folder $from is not in the layers"; bad=1; continue; }
		if [[ " ${MAY[$from]} " != *" $to "* ]]; then
			echo "    $f includes $to/: $from/ may include only ${MAY[$from]:-core/} (docs/architecture.md, Layers)"
			bad=1
		fi
	done < <(grep -n '^#include "[a-z]*/' core/*.[ch] probes/*.[ch] collectives/*.[ch] hang/*.[ch] \
		jobs/*.[ch] fixers/*.[ch] report/*.[ch] agent/*.[ch] tui/*.[ch] cli/*.[ch])
	((bad == 0))
}

t_nothing_includes_the_glibc_shims() {
	! grep -rn 'glibc_compat' --include='*.c' --include='*.h' core probes collectives hang jobs \
		fixers report agent tui cli
}

# in_doc FILE.c: the "in" cell of its row ("head", "agent", "both"), or nothing
in_doc() {
	awk -F'|' -v f="$1" '
		/^\| `/ {
			cell = $2; gsub(/[ `]/, "", cell); n = split(cell, names, ",")
			for (i = 1; i <= n; i++) {
				name = names[i]; sub(/\/\.h$/, "", name)
				if (name == f) { w = $3; gsub(/ /, "", w); print w; exit }
			}
		}' "$DOC"
}

# members MAP: the library objects a link map pulls, one per line
members() { sed -n 's|^[^ ]*libclusterdoc\.a(\([^)]*\)\.o).*|\1|p' "$1" | sort -u; }

t_the_in_column_is_what_the_links_pull() {
	local amap=build/abi/x86_64/agent.map hmap=build/head.map f base in a h bad=0 want
	[[ -s $amap && -s $hmap ]] || { echo "    no link maps ($amap, $hmap): run make"; return 1; }
	a=$(members "$amap")
	h=$(members "$hmap")
	for f in core/*.c probes/*.c collectives/*.c hang/*.c jobs/*.c fixers/*.c report/*.c; do
		base=${f##*/}
		in=$(in_doc "$base")
		if [[ -z $in ]]; then
			echo "    $f has no row in $DOC"
			bad=1
			continue
		fi
		want=head # also when nothing links it yet (only the tests use it)
		if grep -qx "${base%.c}" <<<"$a"; then
			want=agent
			grep -qx "${base%.c}" <<<"$h" && want=both
		fi
		if [[ $in != "$want" ]]; then
			echo "    $f: the document says '$in', the links say '$want'"
			bad=1
		fi
	done
	((bad == 0))
}

# The files that may start a process themselves (fork, posix_spawn, exec*, system, popen),
# besides core/child.c and core/childrun.c, through which every other command runs
# (docs/architecture.md, "The child runner"); each with why it cannot:
declare -A STARTS_PROCESSES=(
	# the head: the connect-back launcher starts N local agents at once, each with its own
	# environment, and keeps them as the transport's processes, not as short commands
	[core/transport_back_local.c]=head
	# the agent's long jobs: a reaper process (setsid, PDEATHSIG) runs C code between its
	# fork and the job's exec, and outlives the request that started it
	[core/job_process.c]=reaper
	# a detached finisher runs a C function (the torch import and its cache store) that
	# outlives the request: a double fork, no program to run
	[probes/facts_torch_bg.c]=daemon
	# the RDMA proof opens a verbs device first in a forked child (C code: dlopen and the
	# provider's open, no program to run) under a deadline, so a provider that crashes or
	# hangs costs the child, not the agent
	[probes/verbs_lib.c]=verbs-check
	# NVML's GPU facts are asked in a forked child (C code: dlopen and NVML's calls, no program
	# to run) under per-GPU deadlines, so a query that never returns costs that GPU, named
	[probes/facts_gpu_watch.c]=nvml-watch
)

t_only_the_child_runner_starts_programs() {
	local f line bad=0
	while IFS= read -r line; do
		f=${line%%:*}
		[[ $f == core/child.c || $f == core/childrun.c || -v STARTS_PROCESSES[$f] ]] && continue
		echo "    $line"
		echo "    $f starts a process itself: run it with core/childrun.h (or child_run), or add it, with why, to STARTS_PROCESSES"
		bad=1
	done < <(grep -nE '(^|[^A-Za-z0-9_])(fork|vfork|posix_spawnp?|exec(l|lp|le|v|vp|ve|vpe)|fexecve|system|popen)[[:space:]]*\(' \
		core/*.c probes/*.c collectives/*.c hang/*.c jobs/*.c fixers/*.c report/*.c agent/*.c \
		tui/*.c cli/*.c compat/*.c | grep -vE '^[^:]*:[0-9]+:[[:space:]]*(\*|/\*|//)')
	((bad == 0))
}

# The source folders whose files the size rules hold (STYLE.md rule 14, issue 33: a module grows
# past ~600 lines, it splits along its seams).
SRC_DIRS="agent cli core probes fixers collectives jobs hang report tui compat"
FILE_MAX=800     # no .c over this
FILE_SAY_WHY=700 # a .c over this names its reason below
FUNC_MAX=150     # no function body (its "{" line to its "}" line) over this
# Each .c over FILE_SAY_WHY lines, and why it is long: [folder/file.c]="the reason" (none today).
declare -A LONG_OK=()

t_no_file_over_800_lines_and_those_over_700_say_why() {
	local f n bad=0
	for f in $(for d in $SRC_DIRS; do ls "$d"/*.c; done); do
		n=$(wc -l <"$f")
		if ((n > FILE_MAX)); then
			echo "    $f: $n lines (at most $FILE_MAX): split it along its seams"
			bad=1
		elif ((n > FILE_SAY_WHY)) && [[ ! -v LONG_OK[$f] ]]; then
			echo "    $f: $n lines, over $FILE_SAY_WHY without a reason in test_house.sh's LONG_OK"
			bad=1
		fi
	done
	((bad == 0))
}

# The sources are clang-format's: a function starts at a line "^[a-z].*(", its body opens with
# a line "{" and ends with a line "}".
t_no_function_over_150_lines() {
	local long
	long=$(for d in $SRC_DIRS; do ls "$d"/*.c; done | xargs awk -v max="$FUNC_MAX" '
		FNR == 1 { name = ""; open = 0 }
		/^[a-z].*\(/ && !/;$/ { name = $0; at = FNR }
		/^\{/ { open = FNR }
		/^\}/ && open {
			if (FNR - open + 1 > max)
				printf "    %s:%d: %d lines (at most %d): %s\n", FILENAME, at,
				    FNR - open + 1, max, name
			open = 0
		}')
	[[ -z $long ]] || { echo "$long"; return 1; }
}

# A merge's conflict markers left in a tracked file (a man page or a table is not compiled, so
# nothing else would fail on them). The test fixtures are data and may hold anything.
t_no_tracked_file_holds_a_merge_conflict_marker() {
	local hits
	hits=$(git grep -n -E '^(<{7}|>{7})( |$)' -- . ':!tests/fixtures' ':!tests/fuzz' | head -5)
	[[ -z $hits ]] || { echo "    conflict markers: $hits"; return 1; }
}

itest_run_all
