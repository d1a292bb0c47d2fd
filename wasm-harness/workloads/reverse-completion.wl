# Writes complete in reverse submission order (only at wait): the checkpoint must still
# wait for every block it references before it is made durable.
@seed 4
@completion reverse
mkdir /a
create /a/f
write /a/f 0 20000 5
setxattr /a/f user.x one
sync
write /a/f 4096 8192 6
create /a/g
chmod /a/f 600
sync
