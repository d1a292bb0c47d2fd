# After the setup (mark 1), file holds the old contents or the new, complete.
[ "$ROLLFS_CRASHTEST_MARKS" -ge 1 ] || exit 0
[ -e file ] || { echo "file is missing"; exit 1; }
c=$(tr -d '\000' < file)
n=$(wc -c < file)
if [ "$n" -eq 13 ] && { [ "$c" = "old contents" ] || [ "$c" = "new contents" ]; }; then exit 0; fi
echo "file holds $n bytes: '$c'"
exit 1
