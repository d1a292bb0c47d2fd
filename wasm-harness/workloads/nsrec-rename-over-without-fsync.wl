# Namespace records (@nsrec): ALICE's rename-bad and pointer-bad on a records image. A file is
# written and renamed over another without an fsync of its own, a log is appended to, and a
# directory fsync returns: it must make the whole tree durable (README, "Guarantees"), so
# every crash after it shows the new contents under the name (never an empty file) and the
# log's append; a later file fsync writes a rename's record and must carry its file's data.
# (`mutant-no-riders` is caught here.)
@seed 53
@nsrec
mkdir /d
create /d/file
write /d/file 0 3000 1
create /log
write /log 0 2000 2
sync
create /d/tmp
write /d/tmp 0 6000 3
rename /d/tmp /d/file
write /log 2000 1500 4
fsync /d
create /d/tmp2
write /d/tmp2 0 5000 5
rename /d/tmp2 /d/file
create /g
write /g 0 100 6
fsync /g
