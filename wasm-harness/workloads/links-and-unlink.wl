# Hard links created and removed around checkpoints; the inode lives while a name does.
@seed 3
mkdir /d
create /d/f
write /d/f 0 9000 4
link /d/f /g
link /d/f /d/h
sync
unlink /d/f
sync
unlink /g
setxattr /d/h user.k v1
sync
unlink /d/h
rmdir /d
sync
