#!/bin/sh
# SPDX-License-Identifier: MIT
# Fail when a source file lacks its licence line: every tracked .c, .h, .sh,
# .py, .mk and Makefile (and the CI script .ci/run, debian/rules) of the
# source folders must say `SPDX-License-Identifier: MIT` in its first 3
# lines, after a shebang or a comment opener if it has one. LICENSE holds
# the text the identifier names.
#
#   scripts/check-spdx.sh [DIR]    DIR: the top of a git work tree (default: this one)
#
# Prints "check-spdx: missing: FILE" for each file without it and exits 1;
# exits 0 with a count when every file has it; exits 2 when DIR is not a git
# work tree.
set -eu
top=${1:-$(dirname "$0")/..}
cd "$top" || exit 2
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || {
	echo "check-spdx: $top is not a git work tree" >&2
	exit 2
}
dirs="agent cli collectives compat core fixers hang jobs probes report scripts tests tui debian .ci"
n=0 bad=0
# shellcheck disable=SC2086
for f in $(git ls-files -- Makefile $dirs | grep -E '(\.(c|h|sh|py|mk)|/Makefile|^Makefile|^\.ci/run|^debian/rules)$'); do
	[ -f "$f" ] || continue
	n=$((n + 1))
	if ! head -n 3 "$f" | grep -q 'SPDX-License-Identifier: MIT'; then
		echo "check-spdx: missing: $f"
		bad=$((bad + 1))
	fi
done
if [ "$bad" -gt 0 ]; then
	echo "check-spdx: $bad of $n files lack 'SPDX-License-Identifier: MIT' in their first 3 lines"
	exit 1
fi
echo "check-spdx: $n files carry SPDX-License-Identifier: MIT"
