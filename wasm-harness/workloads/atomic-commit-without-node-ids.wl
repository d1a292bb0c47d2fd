# Issue 13, bug 3: an atomic commit that needs a node id when none is left fails whole
# and stays abortable. Every node id is taken by a live file (four directories, so that no
# directory grows past its inode's own blocks); the transaction writes block 0 (in the
# inode) and block 914 (a new direct node). The commit must return ENOSPC with the file
# unchanged (live and after any crash); mutant-atomic-partial-commit leaves block 0 new.
@device 4096 16
@max-points 40
mkdir /n
mkdir /n/a
mkdir /n/b
mkdir /n/c
mkdir /n/d
create /n/db
write /n/db 0 4096 1
sync
repeat 400 create /n/a/h{i}
repeat 400 create /n/b/h{i}
repeat 400 create /n/c/h{i}
repeat 400 create /n/d/h{i}
atomic_start /n/db
write /n/db 0 4096 20
write /n/db 3743744 4096 21
atomic_commit /n/db
atomic_abort /n/db
sync
