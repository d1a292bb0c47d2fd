# review49: records interleaved with atomic commits, truncation, fallocate, hard links made
# and removed, an orphan fsync'd, a rename of a hard-linked file over another link of it.
@seed 50
@nsrec
mkdir /a
create /a/db
write /a/db 0 8192 1
create /a/f
write /a/f 0 6000 2
sync
link /a/f /a/f2
atomic_start /a/db
write /a/db 0 4096 3
create /a/j
write /a/j 0 512 4
fsync /a/j
atomic_commit /a/db
unlink /a/f2
link /a/f /LLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLL
truncate /a/f 100
fsync /a/f
rename /LLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLL /a/f
falloc /a/j 0 8192 keep
rename /a/j /a/k
fsync /a/db
open /a/k
unlink /a/k
fsync /a
mkdir /a/n
rename /a /b exchange
create /a
rename /b/n /c
fsync /c
link /b/f /c/f
unlink /b/f
fsync /c/f
close /a/k
