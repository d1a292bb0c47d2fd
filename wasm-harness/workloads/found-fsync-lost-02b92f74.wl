# Shrunk by rollfs-sim from file:/work/main/wasm-harness/workloads/cleaning-moves-live-blocks.wl (895 ops -> 2): fsync-lost
# original: rollfs-sim replay --seed 1 --case file:/work/main/wasm-harness/workloads/cleaning-moves-live-blocks.wl --state 3655:0 --torn --eio
# cleaning-moves-live-blocks-shrunk
@seed 9
@completion random2
create /y
fsync /y
