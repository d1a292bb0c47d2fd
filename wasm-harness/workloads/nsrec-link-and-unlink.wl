# Namespace records (@nsrec): a hard link then an fsync of the file; an unlink and an
# rmdir then an fsync of the directory; a name reused after its unlink.
@seed 13
@nsrec
mkdir /d
create /d/f
write /d/f 0 9000 4
mkdir /d/empty
create /d/g
write /d/g 0 100 6
sync
link /d/f /h
write /d/f 0 4096 5
fsync /d/f
unlink /d/g
rmdir /d/empty
fsync /d
create /d/g
write /d/g 0 200 7
fsync /d/g
unlink /h
fsync /d/f
