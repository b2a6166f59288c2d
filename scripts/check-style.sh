#!/bin/sh
# SPDX-License-Identifier: MIT
# Fail when any C file differs from what clang-format (.clang-format) makes of it.
# `make format` fixes them.
set -eu
cd "$(dirname "$0")/.."
files=$(git ls-files '*.c' '*.h')
if clang-format --dry-run --Werror $files 2>/tmp/clusterdoc-style.$$; then
	rm -f /tmp/clusterdoc-style.$$
	echo "check-style: $(echo "$files" | wc -l) files formatted"
	exit 0
fi
grep -E '^[^ ].*error:' /tmp/clusterdoc-style.$$ | cut -d: -f1 | sort -u | sed 's/^/check-style: needs formatting: /'
rm -f /tmp/clusterdoc-style.$$
exit 1
