# Shrunk by rollfs-sim from file:/work/main/wasm-harness/workloads/unlink-after-a-far-write-on-a-full-device.wl (9 ops -> 7): error-after-change
# original: rollfs-sim replay --seed 0 --case file:/work/main/wasm-harness/workloads/unlink-after-a-far-write-on-a-full-device.wl --state 0:0 --torn
# unlink-after-a-far-write-on-a-full-device-shrunk
@seed 16897480642383372025
@completion random3
@discard ignore
@device min+80 16
@max-points 48
mkdir /d
mkdir /d/a
create /d/a/f26
create /fill
fill /fill 65536 100 0
fill /fill 4096 200 64
write /d/a/f26 8192000 4096 4537
