# Namespace records (@nsrec): a directory renamed, then a file below it written and
# fsync'd: the file is found at the path it was fsync'd under, without a checkpoint.
@seed 14
@nsrec
mkdir /a
mkdir /a/sub
create /a/sub/f
write /a/sub/f 0 3000 1
mkdir /b
sync
rename /a/sub /b/moved
write /b/moved/f 0 8000 2
fsync /b/moved/f
rename /b/moved /a/back
create /a/back/g
fsync /a/back/g
create /b/x
rename /a/back/f /b/x exchange
fsync /b/x
