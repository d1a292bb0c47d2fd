# An @earlier-life case of the crash review of the mount's version jump: renames, links, directory fsyncs and xattrs over an earlier use of the image
@seed 8
@completion random3
@earlier-life
mkdir /a
mkdir /b
create /a/f
write /a/f 0 5000 1
fsync /a/f
rename /a/f /b/g
fsync /b/g
link /b/g /a/h
setxattr /b/g user.k v1
fsync /a/h
create /a/n
fsync /a
unlink /a/h
fsync /b/g
rename /b /c
fsync /c/g
write /c/g 0 100 2
fdatasync /c/g
