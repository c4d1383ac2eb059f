#!/usr/bin/env bash
# Instructions per object of the benchmarks' timed regions, counted by callgrind.
#
#   Benchmarks/Scripts/instructions.sh [--scenarios P1,P5,P6,P7] [--size 5000] [--runs 2] [--baseline REV]
#
# Builds the release executable and runs it under valgrind --tool=callgrind with
# `--only SCENARIOS --size N --repetitions 1`. Each peer's timed region zeroes callgrind's counters
# as it starts and dumps them, labelled "P1 strata objects=5000", as it ends (Region.swift), so a
# dump holds exactly the timed work of every thread (the root's writer and the workers included;
# setup and checks excluded). The table divides each dump's total by its object count. With
# --runs 2 (or more) the whole run is repeated and every run's figure printed, to see that they
# agree. Needs valgrind and its headers (Debian's valgrind package has both) when the executable
# is built: without them the markers compile to nothing and no region is dumped. With
# --baseline REV, the same regions are also counted on the benchmark built from git revision REV
# (a temporary worktree) and each figure is printed beside it with the ratio: how H1 compares
# P1 with the history against P1 from before it (Benchmarks/README.md).
set -euo pipefail

package=$(cd "$(dirname "$0")/.." && pwd)
scenarios=P1,P5,P6,P7
size=5000
runs=1
baseline=
while [ $# -gt 0 ]; do
    case "$1" in
        --scenarios) scenarios=$2; shift 2 ;;
        --size) size=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --baseline) baseline=$2; shift 2 ;;
        *) sed -n '2,18s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
    esac
done

command -v valgrind >/dev/null || { echo "instructions.sh: valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
swift build -c release --package-path "$package" >&2
executable=$(swift build -c release --package-path "$package" --show-bin-path)/StrataBenchmarks

# One fixed directory, so that every run sees the same paths; deterministic hashing, so that
# every run's dictionaries probe alike.
work=${TMPDIR:-/tmp}/strata-instructions
rm -rf "$work"
mkdir -p "$work"

# measure EXECUTABLE NAME: every run of EXECUTABLE under callgrind; "label total" per region in
# $work/NAME/runK/regions.
measure() {
    local executable=$1 name=$2
    for run in $(seq 1 "$runs"); do
        local out="$work/$name/run$run"
        mkdir -p "$out"
        rm -rf "$work/data"
        echo "instructions.sh: $name, run $run of $runs: --only $scenarios --size $size under callgrind" >&2
        if ! SWIFT_DETERMINISTIC_HASHING=1 valgrind --tool=callgrind --callgrind-out-file="$out/callgrind.out" \
            "$executable" --only "$scenarios" --size "$size" --repetitions 1 --dir "$work/data" >"$out/log" 2>&1; then
            tail -n 20 "$out/log" >&2
            exit 1
        fi
        # Dumps are callgrind.out.1, .2, … in the order the regions ran; print "label total" for each.
        local dumps
        dumps=$(find "$out" -name 'callgrind.out.*' | wc -l)
        if [ "$dumps" -eq 0 ]; then
            echo "instructions.sh: no region was dumped: the executable was built without valgrind's headers" \
                 "(install valgrind, then rm -rf $package/.build and run again)" >&2
            exit 1
        fi
        for n in $(seq 1 "$dumps"); do
            local dump="$out/callgrind.out.$n"
            echo "$(sed -n 's/^desc: Trigger: Client Request: //p' "$dump") $(sed -n 's/^totals: //p' "$dump")"
        done >"$out/regions"
    done
    rm -rf "$work/data"
}

measure "$executable" head
if [ -n "$baseline" ]; then
    source_tree="$work/baseline-source"
    git -C "$package/.." worktree prune
    git -C "$package/.." worktree add --detach "$source_tree" "$baseline" >&2
    trap 'git -C "$package/.." worktree remove --force "$source_tree" >/dev/null 2>&1 || true' EXIT
    swift build -c release --package-path "$source_tree/Benchmarks" >&2
    measure "$(swift build -c release --package-path "$source_tree/Benchmarks" --show-bin-path)/StrataBenchmarks" baseline
fi

# The table: scenarios asked for only (their setup may run other scenarios' regions, untimed).
echo "callgrind, --size $size, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(valgrind --version)"
echo "| scenario | peer | objects |$(for run in $(seq 1 "$runs"); do printf ' instructions per object (run %s) |' "$run"; done)"
echo "|---|---|---|$(for run in $(seq 1 "$runs"); do printf -- '---|'; done)"
paste -d' ' $(for run in $(seq 1 "$runs"); do echo "$work/head/run$run/regions"; done) | awk -v wanted="$scenarios" '
    BEGIN { split(wanted, list, ","); for (i in list) keep[list[i]] = 1 }
    keep[$1] {
        objects = substr($3, 9)
        line = sprintf("| %s | %s | %s |", $1, $2, objects)
        for (i = 4; i <= NF; i += 4) line = line sprintf(" %.0f |", $i / objects)
        print line
    }'
if [ -n "$baseline" ]; then
    # Run 1 of each build, region by region: the baseline's figure, this tree's, their ratio.
    echo
    echo "| scenario | peer | objects | $baseline | this tree | ratio |"
    echo "|---|---|---|---|---|---|"
    awk -v wanted="$scenarios" '
        BEGIN { split(wanted, list, ","); for (i in list) keep[list[i]] = 1 }
        FNR == NR { base[$1 " " $2 " " $3] = $4; next }
        keep[$1] && (($1 " " $2 " " $3) in base) {
            objects = substr($3, 9)
            printf "| %s | %s | %s | %.0f | %.0f | %.3f |\n", $1, $2, objects,
                base[$1 " " $2 " " $3] / objects, $4 / objects, $4 / base[$1 " " $2 " " $3]
        }' "$work/baseline/run1/regions" "$work/head/run1/regions"
fi
echo "profiles and logs: $work"
