# fallocate mode 0 and KEEP_SIZE reserve their range (issue 16): after another file has
# filled the device, writes into the reserved ranges must not get ENOSPC (the explorer's
# oracle refuses that ENOSPC as a violation), and they are fsync'd and crash-explored like
# any write. Then a truncation releases part of a reservation and a punch the rest, and a
# ZERO_RANGE over written data frees what it zeroes (no reservation) and a write refills it. mutant-fallocate-no-reserve (the
# call grows the size but reserves nothing) fails the first write into /f.
@seed 17
@device 4096 16
mkdir /d
create /d/f
create /d/k
falloc /d/f 0 1200000
falloc /d/k 4096 400000 keep
sync
create /d/filler
fill /d/filler 65536 7
fill /d/filler 4096 9
write /d/f 0 600000 11
write /d/f 600000 600000 12
fsync /d/f
write /d/k 4096 400000 13
fdatasync /d/k
zero /d/f 8192 100000 keep
write /d/f 8192 100000 14
fsync /d/f
truncate /d/f 100000
punch /d/k 0 404096
write /d/f 200000 4096 15
sync
