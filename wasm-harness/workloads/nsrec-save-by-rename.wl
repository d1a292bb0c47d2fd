# Namespace records (@nsrec): save by rename. Write a temporary file, fsync it, rename it
# over the old one, fsync the directory: the old contents or the new, under the one name.
@seed 12
@nsrec
mkdir /d
create /d/config
write /d/config 0 5000 1
sync
create /d/config.tmp
write /d/config.tmp 0 7000 2
fsync /d/config.tmp
rename /d/config.tmp /d/config
fsync /d
create /d/config.tmp
write /d/config.tmp 0 3000 3
fsync /d/config.tmp
rename /d/config.tmp /d/config
fsync /d
