# exchange of two directories across parents, then a file below one fsync'd; then a dir fsync
@nsrec
mkdir /a
mkdir /b
mkdir /a/x
mkdir /b/y
create /a/x/f
write /a/x/f 0 5000 1
create /b/y/g
write /b/y/g 0 3000 2
sync
rename /a/x /b/y exchange
write /a/x/g 0 100 3
write /b/y/f 0 100 4
fsync /b/y/f
rename /b/y/f /a/x/h
create /a/x/n
fsync /a/x/n
fsync /a
