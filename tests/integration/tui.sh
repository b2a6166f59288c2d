# SPDX-License-Identifier: MIT
# tui.sh - drive the real TUI inside tmux for screen tests. Source it after itest.sh.
#
#   tui_start [ENV=VAL...] -- ARGS...   clusterdoc ARGS in the head namespace, in a detached
#                                       tmux session of its own (80x24 unless TUI_SIZE="WxH")
#   tui_keys KEY...                     tmux send-keys (tmux key names: Tab BTab Enter Escape ...)
#   tui_screen                          the screen as text (trailing blanks cut)
#   tui_wait REGEX [SECONDS]            until the screen matches (default 30 s); 1 on timeout
#   tui_expect NAME                     the screen equals tests/integration/tui/NAME.txt, where a
#                                       '~' in the expected text matches any one character and
#                                       a line ending in '~*' any rest of the line;
#                                       TUI_UPDATE=1 writes the file instead (review the diff)
#   tui_exit_status [SECONDS]           wait for clusterdoc to end; prints its exit status
#   tui_ended_clean SAN_DIR             after a quit: clusterdoc exited 0 and left no sanitizer
#                                       report in SAN_DIR (its stderr and the reports are shown
#                                       when not); 1 otherwise
#   tui_stop                            end the tmux server (only ours: its own socket)
# The tmux socket is private to the test (-L cdtui<pid>), so nothing else is touched.
TUI_SOCK="cdtui$$"
TUI_DIR=
TUI_EXPECTED="$CD_TOP/tests/integration/tui"

tmux_() { tmux -L "$TUI_SOCK" "$@"; }

tui_start() {
	local envs=() size=${TUI_SIZE:-80x24} q
	while [[ $# -gt 0 && $1 != -- ]]; do envs+=("$1"); shift; done
	shift
	tui_stop
	TUI_DIR=$(mktemp -d)
	# the command line as one shell word list (tmux runs it with sh -c)
	q=$(printf '%q ' env "${envs[@]}" CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" "$CLUSTERDOC" "$@")
	cat >"$TUI_DIR/run.sh" <<EOF
source "$CD_TOP/tests/cluster/cluster.sh"
cluster_attach "$CD_RUN"
cluster_head_exec $q 2>"$TUI_DIR/stderr"
echo \$? >"$TUI_DIR/exit"
EOF
	tmux_ -f /dev/null new-session -d -x "${size%x*}" -y "${size#*x}" "bash $TUI_DIR/run.sh" || return 1
	tmux_ set-option -g remain-on-exit on >/dev/null
}

tui_keys() { tmux_ send-keys "$@"; }

tui_screen() { tmux_ capture-pane -p | sed 's/[[:space:]]*$//'; }

tui_wait() {
	local re=$1 secs=${2:-30} i
	for ((i = 0; i < secs * 20; i++)); do
		grep -Eq -- "$re" <<<"$(tui_screen)" && return 0
		sleep 0.05
	done
	echo "    the screen never matched /$re/ in $secs s; it shows:"
	tui_screen | sed 's/^/    | /'
	return 1
}

tui_expect() {
	local name=$1 file="$TUI_EXPECTED/$1.txt"
	if [[ ${TUI_UPDATE:-0} == 1 ]]; then
		mkdir -p "$TUI_EXPECTED"
		tui_screen >"$file"
		echo "    wrote $file"
		return 0
	fi
	[[ -f $file ]] || { echo "    no expected screen $file (TUI_UPDATE=1 writes it)"; return 1; }
	tui_screen | "$CD_PY" -c '
import sys
want = open(sys.argv[1]).read().split("\n")
got = sys.stdin.read().split("\n")
while want and want[-1] == "": want.pop()
while got and got[-1] == "": got.pop()
bad = []
for k in range(max(len(want), len(got))):
    w = want[k] if k < len(want) else ""
    g = got[k] if k < len(got) else ""
    n = max(len(w), len(g))
    if w.endswith("~*"):  # the rest of the line is free
        w = w[:-2]
        g = g[:len(w)]
        n = len(w)
    w, g = w.ljust(n), g.ljust(n)
    if any(a != "~" and a != b for a, b in zip(w, g)):
        bad.append((k + 1, w.rstrip(), g.rstrip()))
for k, w, g in bad[:6]:
    print("    line %d: expected |%s|" % (k, w))
    print("    line %d:      got |%s|" % (k, g))
sys.exit(1 if bad else 0)
' "$file"
}

tui_exit_status() {
	local secs=${1:-10} i
	for ((i = 0; i < secs * 20; i++)); do
		[[ -s $TUI_DIR/exit ]] && { cat "$TUI_DIR/exit"; return 0; }
		sleep 0.05
	done
	echo "timeout"
	return 1
}

tui_ended_clean() {
	local san=$1 status
	status=$(tui_exit_status 20)
	if [[ $status != 0 ]]; then
		echo "    exit status $status; its stderr and sanitizer logs:"
		cat "$TUI_DIR/stderr" "$san"/* 2>/dev/null | head -60 | sed 's/^/    /'
		return 1
	fi
	if compgen -G "$san/*" >/dev/null; then
		echo "    sanitizer reports:"
		head -40 "$san"/* | sed 's/^/    /'
		return 1
	fi
}

tui_stop() {
	tmux_ kill-server 2>/dev/null
	[[ -n $TUI_DIR ]] && rm -rf "$TUI_DIR"
	TUI_DIR=
	return 0
}
