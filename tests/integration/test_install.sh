#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installable by people who are not its developers: the licence and its checker, `make` without
# the aarch64 cross toolchain, `make install` into the directories asked for and `make uninstall`
# of exactly that, and the shell completions made from the command table (bash's driven through
# bash-completion's own loader, as an interactive shell finds it; zsh's typed with Tab into an
# interactive zsh on a pseudo-terminal). No cluster: this runs make, bash and zsh on the head.
# test_deb.sh builds and installs the Debian package.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=install
TMP=$(mktemp -d /tmp/cd-install.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
BASH_COMPLETION=/usr/share/bash-completion/bash_completion

# mk ARGS...: make in the tree, as a user runs it (not as a sub-make of make test's)
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -C "$CD_TOP" "$@"; }

t_license_is_mit_for_the_clusterdoc_authors() {
	expect_eq "$(head -1 "$CD_TOP/LICENSE")" "MIT License" "LICENSE's first line" || return 1
	expect_eq "$(grep -c '^Copyright (c) 2026 The clusterdoc authors$' "$CD_TOP/LICENSE")" 1 "its copyright line"
}

# a throw-away work tree: one file with the line (after a shebang), one without, one that is
# not source
t_check_spdx_names_each_source_file_without_the_mit_line() {
	local d=$TMP/spdx out rc=0
	mkdir -p "$d/core" "$d/scripts" "$d/docs"
	printf '#!/bin/sh\n# SPDX-License-Identifier: MIT\necho\n' >"$d/scripts/ok.sh"
	printf '/* a.c */\nint a;\n' >"$d/core/a.c"
	printf 'no line\n' >"$d/docs/x.md"
	git -C "$d" init -q && git -C "$d" add -A || return 1
	out=$("$CD_TOP/scripts/check-spdx.sh" "$d") || rc=$?
	expect_eq "$rc" 1 "exit status" || return 1
	expect_eq "$(grep 'missing:' <<<"$out")" "check-spdx: missing: core/a.c" "the files named" || return 1
	printf '// SPDX-License-Identifier: MIT\nint a;\n' >"$d/core/a.c"
	out=$("$CD_TOP/scripts/check-spdx.sh" "$d") || { echo "    still fails: $out"; return 1; }
	expect_eq "$out" "check-spdx: 2 files carry SPDX-License-Identifier: MIT" "its count"
}

# The lines go in by one commit over the whole tree, which also writes .spdx-done.
t_every_source_file_carries_the_mit_spdx_line() {
	[[ -e $CD_TOP/.spdx-done ]] ||
		{ itest_skip "the SPDX lines are not in the sources yet: this runs once .spdx-done exists"; return; }
	"$CD_TOP/scripts/check-spdx.sh" "$CD_TOP" | tail -15
	return "${PIPESTATUS[0]}"
}

# make all with no aarch64 cross compiler (a name that is nowhere), on the built tree: it
# says once how to get one, builds nothing of the cross agent, and succeeds
t_make_without_the_aarch64_toolchain_builds_the_rest_and_says_how_to_get_it() {
	local out rc=0
	install_ready || return
	out=$(mk AARCH64_CC=cd-no-such-gcc all 2>&1) || rc=$?
	expect_eq "$rc" 0 "make's exit status ($(tail -3 <<<"$out"))" || return 1
	expect_eq "$(grep -c 'not building clusterdoc-agent-aarch64' <<<"$out")" 1 "lines saying the aarch64 agent is left out" || return 1
	expect_match "$out" "'make deps-cross'.*gcc-aarch64-linux-gnu libc6-dev-arm64-cross libjansson-dev:arm64 zlib1g-dev:arm64" "how to get it" || return 1
	expect_eq "$(grep -E 'cd-no-such-gcc|aarch64' <<<"$out" | grep -v 'not building' | head -3)" "" "commands of the cross build" || return 1
	out=$(mk -n AARCH64_CC=cd-no-such-gcc AARCH64_AGENT=no all 2>&1)
	expect_eq "$(grep -c 'aarch64' <<<"$out")" 0 "lines naming aarch64 with AARCH64_AGENT=no"
}

# debian/control's Build-Depends, against what make deps installs (less build-essential, which
# Debian's builds always have)
t_the_package_build_depends_are_what_make_deps_installs() {
	local bd deps
	bd=$(awk '/^Build-Depends:/ { on = 1; sub(/^Build-Depends:/, "") } on && /^[A-Z]/ && !/^Build-Depends/ { exit }
		on { print }' "$CD_TOP/debian/control" | tr ',' '\n' | sed 's/^ *//; s/ .*//' | grep -v '^debhelper-compat$' | grep . | sort)
	deps=$("$CD_TOP/scripts/deps.sh" --print build | grep -v '^build-essential$' | sort)
	expect_eq "$bd" "$deps" "Build-Depends"
}

# the files of a tree, relative to it, one a line
tree_files() { (cd "$1" && find . -type f | sed 's|^\./||' | sort); }

# DESTDIR=$TMP/root, each directory moved from PREFIX's default (PREFIX itself, and with it
# LIBEXECDIR, stays: a change of LIBEXECDIR rebuilds the head, which the tests beside this one run)
INSTALL_VARS=(BINDIR=/srv/cd/bin MANDIR=/srv/cd/man DATADIR=/srv/cd/share)
install_ready() {
	[[ -x $CD_TOP/clusterdoc && -x $CD_TOP/clusterdoc-agent ]] ||
		{ itest_skip "no release build in $CD_TOP (make all)"; return; }
}

t_install_puts_each_file_in_the_directory_asked_for() {
	local d=$TMP/root want out
	install_ready || return
	out=$(mk install DESTDIR="$d" "${INSTALL_VARS[@]}" 2>&1) ||
		{ echo "    make install failed: $(tail -5 <<<"$out")"; return 1; }
	want="srv/cd/bin/clusterdoc
srv/cd/man/man1/clusterdoc.1
srv/cd/share/bash-completion/completions/clusterdoc
srv/cd/share/zsh/site-functions/_clusterdoc
usr/local/libexec/clusterdoc/clusterdoc-agent"
	[[ -x $CD_TOP/clusterdoc-agent-aarch64 ]] && want+=$'\n'usr/local/libexec/clusterdoc/clusterdoc-agent-aarch64
	expect_eq "$(tree_files "$d")" "$(sort <<<"$want")" "the installed files" || return 1
	cmp -s "$d/srv/cd/bin/clusterdoc" "$CD_TOP/clusterdoc" || { echo "    the installed head is not the built one"; return 1; }
	expect_eq "$(stat -c %a "$d/srv/cd/bin/clusterdoc" "$d/srv/cd/man/man1/clusterdoc.1" | tr '\n' ' ')" "755 644 " "modes"
}

# beside files of other programs in the same directories, which stay
t_uninstall_removes_exactly_what_install_put() {
	local d=$TMP/un out
	install_ready || return
	mkdir -p "$d/srv/cd/bin" "$d/srv/cd/share/bash-completion/completions" "$d/usr/local/libexec"
	echo other >"$d/srv/cd/bin/other"
	echo other >"$d/srv/cd/share/bash-completion/completions/other"
	echo other >"$d/usr/local/libexec/other"
	out=$(mk install DESTDIR="$d" "${INSTALL_VARS[@]}" 2>&1) ||
		{ echo "    make install failed: $(tail -5 <<<"$out")"; return 1; }
	out=$(mk uninstall DESTDIR="$d" "${INSTALL_VARS[@]}" 2>&1) ||
		{ echo "    make uninstall failed: $(tail -5 <<<"$out")"; return 1; }
	expect_eq "$(tree_files "$d" | tr '\n' ' ')" \
		"srv/cd/bin/other srv/cd/share/bash-completion/completions/other usr/local/libexec/other " "what is left" || return 1
	[[ ! -e $d/usr/local/libexec/clusterdoc && -d $d/srv/cd/share/zsh/site-functions ]] ||
		{ echo "    libexec/clusterdoc is left, or a shared folder was removed"; return 1; }
}

# The installed script, found by bash-completion's loader in DATADIR (XDG_DATA_DIRS), in an
# interactive bash: `complete -p`, then the function on the words of a command line.
t_bash_completion_completes_a_command_and_one_of_its_options() {
	local d=$TMP/comp out
	install_ready || return
	[[ -f $BASH_COMPLETION ]] || { itest_skip "no $BASH_COMPLETION (make deps-test installs bash-completion)"; return; }
	mk install DESTDIR="$d" "${INSTALL_VARS[@]}" >/dev/null 2>&1 || return 1
	out=$(XDG_DATA_DIRS="$d/srv/cd/share" HOME=$TMP bash --norc --noprofile -i -c '
		. '"$BASH_COMPLETION"'
		__load_completion clusterdoc || echo "not loaded"
		complete -p clusterdoc
		COMP_WORDS=(clusterdoc fa); COMP_CWORD=1; _clusterdoc; echo "1: ${COMPREPLY[*]}"
		COMP_WORDS=(clusterdoc check --slurm-p); COMP_CWORD=2; _clusterdoc; echo "2: ${COMPREPLY[*]}"
		COMP_WORDS=(clusterdoc facts --hostf); COMP_CWORD=2; _clusterdoc; echo "3: ${COMPREPLY[*]}"
		COMP_WORDS=(clusterdoc nodeset --hostf); COMP_CWORD=2; _clusterdoc; echo "4: ${COMPREPLY[*]}"
		COMP_WORDS=(clusterdoc run --launcher ""); COMP_CWORD=3; _clusterdoc; echo "5: ${COMPREPLY[*]}"
		COMP_WORDS=(clusterdoc mnist -w n1 --backend g); COMP_CWORD=5; _clusterdoc; echo "6: ${COMPREPLY[*]}"' 2>/dev/null)
	expect_eq "$out" "complete -F _clusterdoc clusterdoc
1: facts
2: --slurm-prolog
3: --hostfile
4: 
5: torchrun none mpirun ssh srun local-connect
6: gloo" "bash's answers"
}

# zsh_complete FPATH_DIR LINE: LINE typed into an interactive zsh (compinit with the installed
# function first in fpath) on a pseudo-terminal, then Tab; prints the line as it then stands,
# between @ and @ (to the line's start, "print -r -- @", to its end, "@", Enter)
zsh_complete() {
	cat >"$TMP/zdrive.zsh" <<'ZSH'
zmodload zsh/zpty
zpty -b z zsh -f -i
zpty -w z "PS1='> '; fpath=($1 \$fpath); autoload -Uz compinit; compinit -u -D"
zpty -w -n z "$2"$'\t'$'\x01print -r -- @\x05@\n'
# what zle draws, until the line print wrote (at most 10 s)
all=""
repeat 1000; do
	zpty -rt z chunk 2>/dev/null && all+=$chunk || sleep 0.01
	[[ ${all//$'\r'/} == *$'\n'@*@$'\n'* ]] && break
done
zpty -d z
print -r -- "$all" | tr -d '\r' | grep -a '^@' | tail -1
ZSH
	PATH=$CD_TOP:$PATH HOME=$TMP zsh -f "$TMP/zdrive.zsh" "$@"
}

t_zsh_completion_completes_a_command_and_one_of_its_options() {
	local d=$TMP/zcomp fp
	install_ready || return
	command -v zsh >/dev/null || { itest_skip "no zsh (make deps-test installs it)"; return; }
	mk install DESTDIR="$d" "${INSTALL_VARS[@]}" >/dev/null 2>&1 || return 1
	fp=$d/srv/cd/share/zsh/site-functions
	expect_eq "$(zsh_complete "$fp" 'clusterdoc fac')" "@clusterdoc facts@" "clusterdoc fac<Tab>" || return 1
	expect_eq "$(zsh_complete "$fp" 'clusterdoc check --slurm-pr')" "@clusterdoc check --slurm-prolog@" "check --slurm-pr<Tab>" || return 1
	expect_eq "$(zsh_complete "$fp" 'clusterdoc bench --backend nc')" "@clusterdoc bench --backend nccl@" "bench --backend nc<Tab>"
}

# Every word the scripts offer for an option is one that command takes (its option's own parse)
t_every_value_the_completions_offer_is_taken_by_its_command() {
	local bashc=$TMP/v.bash cmd c opt w words n=0 rc
	"$CLUSTERDOC" completion bash >"$bashc" || return 1
	# "CMD --opt=w1,w2", one a line, from each command's choices='...'
	while read -r cmd c; do
		opt=${c%%=*} words=${c#*=}
		for w in ${words//,/ }; do
			rc=0
			"$CLUSTERDOC" "$cmd" "$opt" "$w" --help >/dev/null 2>"$TMP/v.err" || rc=$?
			expect_eq "$rc" 0 "clusterdoc $cmd $opt $w ($(cat "$TMP/v.err"))" || return 1
			n=$((n + 1))
		done
	done < <(awk '/^\t[a-z-]+\)$/ { cmd = substr($1, 1, length($1) - 1) }
		/^\t\tchoices=/ { l = $0; sub(/^\t\tchoices=./, "", l); sub(/.$/, "", l)
			k = split(l, a, " "); for (i = 1; i <= k; i++) print cmd, a[i] }' "$bashc")
	((n > 20)) || { echo "    only $n words seen: the script's choices changed?"; return 1; }
	echo "    $n words, each taken by its command"
}

# --help's Commands list and each command's --help options, against both scripts
t_completions_offer_every_command_and_every_option_its_help_lists() {
	local bashc=$TMP/c.bash zshc=$TMP/c.zsh cmd opt bw zw n=0
	"$CLUSTERDOC" completion bash >"$bashc" && "$CLUSTERDOC" completion zsh >"$zshc" || return 1
	bash -n "$bashc" || return 1
	if command -v zsh >/dev/null; then zsh -n "$zshc" || return 1; fi
	for cmd in $("$CLUSTERDOC" --help | awk '/^Commands:/ { on = 1; next } on && !NF { exit } on { print $1 }'); do
		grep -q "^	$cmd)\$" "$bashc" || { echo "    bash: no case for $cmd"; return 1; }
		grep -q "^		'$cmd:" "$zshc" || { echo "    zsh: $cmd not described"; return 1; }
		# the command's case of each script, its words one a line
		bw=$(awk -v c="	$cmd)" '$0 == c { on = 1; next } on { print; if (/;;/) exit }' "$bashc" | tr " '" '\n\n')
		zw=$(awk -v c="	$cmd)" '$0 == c { on = 1; next } on { print; if (/;;/) exit }' "$zshc" | tr ":'" '\n\n')
		for opt in $("$CLUSTERDOC" "$cmd" --help | grep -oE '^ {1,8}(-[a-zA-Z], )?--[a-z0-9-]+' | grep -oE -- '--[a-z0-9-]+$'); do
			grep -qx -- "$opt" <<<"$bw" || { echo "    bash: $cmd lacks $opt"; return 1; }
			grep -qx -- "$opt" <<<"$zw" || { echo "    zsh: $cmd lacks $opt"; return 1; }
			n=$((n + 1))
		done
	done
	((n > 100)) || { echo "    only $n options seen: --help's format changed?"; return 1; }
	echo "    $n options of every command in both scripts"
}

t_completion_refuses_another_shell() {
	local rc=0 err
	err=$("$CLUSTERDOC" completion fish 2>&1 >/dev/null) || rc=$?
	expect_eq "$rc" 2 "exit status" || return 1
	expect_eq "$err" "usage: clusterdoc completion bash|zsh" "stderr"
}

itest_run_all
