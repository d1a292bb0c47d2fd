# an open file unlinked (orphan), its name reused, renames over an open file
@nsrec
mkdir /a
create /a/f
write /a/f 0 5000 1
create /a/g
write /a/g 0 3000 2
sync
open /a/f
unlink /a/f
create /a/f
write /a/f 0 100 3
fsync /a/f
open /a/g
create /a/t
write /a/t 0 200 4
rename /a/t /a/g
fsync /a
write /a/g 0 10 5
close /a/g
close /a/f
create /a/z
fsync /a/z
