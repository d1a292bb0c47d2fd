# Shrunk by rollfs-sim from ace:1 (12 ops -> 4): fsync-lost
# original: rollfs-sim replay --seed 1 --case ace:1 --state 70:0 --torn --eio
# ace-1-shrunk
@seed 3836152465311975516
@completion random3
mkdir /A
sync
create /A/baz
fsync /A/baz
