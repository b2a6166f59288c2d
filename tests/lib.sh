# tests/lib.sh - shared by the test runners. Source it.
# Every result line goes to $CD_RESULTS ("PASS name" / "FAIL name" / "SKIP name")
# and tests/summary.sh prints the totals.
CD_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CD_RESULTS=${CD_RESULTS:-$CD_TOP/build/test-results.txt}
mkdir -p "$(dirname "$CD_RESULTS")"

result() { # result PASS|FAIL|SKIP name [detail]
	echo "$1 $2" >>"$CD_RESULTS"
	case $1 in
	PASS) printf '  ok    %s\n' "$2" ;;
	FAIL) printf '  FAIL  %s%s\n' "$2" "${3:+: $3}" ;;
	SKIP) printf '  skip  %s%s\n' "$2" "${3:+ ($3)}" ;;
	esac
}
