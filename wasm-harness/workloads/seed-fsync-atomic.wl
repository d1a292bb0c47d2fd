# fsync, fdatasync, directory fsync and atomic-write sessions between checkpoints
# (invariants 2-5, docs/INVARIANTS.md): a committed session shows all new data, an aborted one all old data.
@seed 21
mkdir /a
create /a/f
create /a/db
write /a/db 0 8192 1
sync
write /a/f 0 3000 2
fdatasync /a/f
atomic_start /a/db
write /a/db 0 4096 3
write /a/db 8192 4096 4
atomic_commit /a/db
create /a/n
write /a/n 0 100 5
fsync /a/n
atomic_start /a/db
write /a/db 4096 100 6
atomic_abort /a/db
write /a/f 1000 5000 7
fsync /a/f
fsync /a
