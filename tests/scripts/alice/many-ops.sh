# Every kind of operation the operation log records, then the tree's manifest (manifest.sh)
# to $MANIFEST_OUT: the state that keeps every operation must show the same tree.
set -e
mkdir d e
printf 'hello\n' > d/a
ln d/a d/hard
ln -s a d/sym
printf 'x%.0s' $(seq 1 5000) > d/big
truncate -s 9000 d/big
fallocate -p -o 4096 -l 4096 d/big
fallocate -l 8192 d/fa
xfs_io -c "pwrite -q -S 0x41 100 200" d/fa
cp d/big e/copy
chmod 600 d/hard
setfattr -n user.k -v val d/a
setfattr -n user.gone -v 1 d/a
setfattr -x user.gone d/a
mkfifo d/fifo
mv d/sym e/sym2
printf z > d/tmp
rm d/tmp
mkdir d/sub
rmdir d/sub
printf 'OW' | dd of=d/a bs=1 seek=2 conv=notrunc 2>/dev/null
mv e/copy d/copy
sync d/a
sync d
sh "$(dirname "$0")/manifest.sh" > "$MANIFEST_OUT"
