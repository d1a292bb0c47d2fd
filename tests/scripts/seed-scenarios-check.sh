#!/bin/sh
# The check of seed-scenarios.sh, run inside a recovered crash image: everything made
# durable before the last mark that preceded the crash ($ROLLFS_CRASHTEST_MARKS) is there.
M=${ROLLFS_CRASHTEST_MARKS:-0}
fail() { echo "after $M marks: $*"; exit 1; }
pat() { head -c "$1" /dev/zero | tr '\0' "$2"; }
same() { [ -f "$1" ] && [ "$(cat "$1")" = "$2" ] || fail "$1 is wrong or missing"; }
if [ "$M" -ge 1 ]; then
    old="$(pat 40000 a)"
    new="$(pat 20000 a)ZZZZ$(pat 19996 a)"
    got="$(cat d/f 2>/dev/null)"
    if [ "$M" -ge 9 ]; then
        [ "$got" = "$new" ] || fail "d/f lost its fsync'd overwrite"
    else
        [ "$got" = "$old" ] || [ "$got" = "$new" ] || fail "d/f is wrong or missing"
    fi
    if [ "$M" -ge 8 ]; then
        [ ! -e d/g ] || fail "d/g came back after its unlink was made durable"
    elif [ -e d/g ]; then
        # The unlink (step 8) may be durable already: gone, or still whole.
        same d/g "$(pat 9000 b)"
    fi
fi
if [ "$M" -ge 2 ]; then
    same d/r2 "$(pat 5000 c)$(pat 300 C)"
    [ ! -e d/r ] || fail "d/r still there after the rename was made durable"
fi
if [ "$M" -ge 3 ]; then
    same d/l "$(pat 7000 e)"
    same d/l2 "$(pat 7000 e)"
fi
if [ "$M" -ge 4 ]; then
    n=$(ls d2 | wc -l)
    [ "$n" -eq 201 ] || fail "d2 has $n names, not 201"
    same d2/x200 "$(pat 100 x)"
fi
if [ "$M" -ge 5 ]; then
    k=$((M - 4))
    [ "$k" -gt 3 ] && k=3
    exp=""
    for i in $(seq 1 $k); do exp="$exp$(pat 1000 $i)"; done
    [ "$(head -c ${#exp} d/log)" = "$exp" ] || fail "d/log lost fdatasync'd appends"
fi
exit 0
