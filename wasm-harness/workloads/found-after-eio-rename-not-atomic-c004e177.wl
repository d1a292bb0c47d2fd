# Shrunk by rollfs-sim from file:wasm-harness/workloads/found-rename-not-atomic-67cc5e0f.wl (7 ops -> 7): after-eio-rename-not-atomic
# original: rollfs-sim replay --seed 1 --case file:wasm-harness/workloads/found-rename-not-atomic-67cc5e0f.wl --state 58:0 --torn --eio
# found-rename-not-atomic-67cc5e0f-shrunk
@seed 1403195241828734019
@completion random3
mkdir /a
mkdir /a/c
symlink /a/h target
create /a/c/h
rename /a/h /i noreplace
sync
rename /a/c/h /i
