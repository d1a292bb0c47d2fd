# Shrunk by rollfs-sim from full:40 (68 ops -> 7): op-mismatch
# original: rollfs-sim replay --seed 918273 --case full:40 --state 0:0 --torn --eio --cold
# inline-punch-on-a-full-device: a hole punch past the end of an inline file on a full device (a removal: never ENOSPC, issue 41) converted the file first, which needs a block: ENOSPC (inline review)
@seed 7399800791848649972
@completion random3
@device min+128 16
mkdir /d
create /d/f0
write /d/f0 0 100 1
create /fill
fill /fill 65536 100 0
fill /fill 4096 200 64
punch /d/f0 40960 65536
