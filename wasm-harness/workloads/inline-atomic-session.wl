# Inline data review: atomic sessions on inline files. The session stages over the inline
# bytes (its block 0 read from the inode) and the commit converts the file first: a commit
# of small writes, of a write past the inline limit, an abort (the file stays inline), an
# fsync of the file during a session (the inline bytes, not the staged ones), and a
# session that grows the file far; sessions over inline files that spill to a
# copy-on-write inode, committed and aborted.
@seed 5
mkdir /d
create /d/a
write /d/a 0 3000 1
create /d/b
write /d/b 0 500 2
create /d/c
write /d/c 0 100 3
sync
atomic_start /d/a
write /d/a 100 50 4
write /d/a 3600 200 5
atomic_commit /d/a
atomic_start /d/b
write /d/b 0 300 6
fsync /d/b
atomic_abort /d/b
write /d/b 400 10 7
fsync /d/b
atomic_start /d/c
write /d/c 50 20 8
fsync /d/c
write /d/c 200000 4096 9
atomic_commit /d/c
fsync /d/a
create /d/e
write /d/e 0 100 10
sync
atomic_start /d/e
write /d/e 10 20 11
write /d/e 8192 1048576 12
sync
atomic_commit /d/e
create /d/f
write /d/f 0 100 13
sync
atomic_start /d/f
write /d/f 8192 1048576 14
sync
atomic_abort /d/f
fsync /d/f
