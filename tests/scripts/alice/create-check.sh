# Once the workload set its mark, f exists with its data.
[ "$ROLLFS_CRASHTEST_MARKS" -ge 1 ] || exit 0
[ -e f ] || { echo "f is missing"; exit 1; }
[ "$(cat f)" = data ] || { echo "f holds '$(cat f)'"; exit 1; }
