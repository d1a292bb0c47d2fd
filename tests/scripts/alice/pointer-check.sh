# The pointer never names more bytes than the log holds (a missing or empty pointer is 0).
[ "$ROLLFS_CRASHTEST_MARKS" -ge 1 ] || exit 0
[ -e log ] || { echo "log is missing"; exit 1; }
[ -e ptr ] || exit 0
p=$(tr -cd 0-9 < ptr)
[ -n "$p" ] || exit 0
n=$(wc -c < log)
[ "$p" -le "$n" ] || { echo "ptr says $p bytes, log holds $n"; exit 1; }
