# hard links across directories made and removed before fsyncs; rename over a linked name
@nsrec
mkdir /a
mkdir /b
create /a/f
write /a/f 0 6000 1
create /b/g
write /b/g 0 2000 2
sync
link /a/f /b/l
write /a/f 0 100 3
unlink /a/f
rename /b/l /b/g
fsync /b/g
link /b/g /a/f2
unlink /b/g
create /b/g
write /b/g 0 50 5
fsync /b/g
fsync /a/f2
