# Shrunk by rollfs-sim from file:wasm-harness/workloads/unlink-after-a-far-write-on-a-full-device.wl (9 ops -> 3): tree-mismatch
# original: rollfs-sim replay --seed 7 --case file:wasm-harness/workloads/unlink-after-a-far-write-on-a-full-device.wl --state e279:1 --torn --eio
# unlink-after-a-far-write-on-a-full-device-shrunk
@seed 16897480642383372025
@completion random3
@discard ignore
@device min+80 16
@max-points 48
create /fill
fill /fill 65536 100 0
fill /fill 4096 200 64
