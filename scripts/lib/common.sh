# shellcheck shell=bash
# Sourced by every script in scripts/ (through rig.sh or directly): the messages and the small
# arithmetic they all use, defined once. Bash only; defines functions and three variables:
#   REPO              the repository's root
#   SCRIPT            the running script's file name, for messages
#   CARGO_TARGET_DIR  exported; the caller's value, or the repository's target/

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SCRIPT=$(basename "$0")
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$REPO/target}

# log MESSAGE...: a section heading on stderr, with the seconds since the script started.
log() { printf '\n== [%4ds] %s\n' "$SECONDS" "$*" >&2; }

# die MESSAGE...: the message on stderr, named by the script, and exit 1.
die() {
    printf '%s: %s\n' "$SCRIPT" "$*" >&2
    exit 1
}

# skip_unless_ci MESSAGE...: a missing tool or file. Under CI=true that is a failure (die);
# elsewhere the script says SKIP and why, and exits 0.
skip_unless_ci() {
    [[ ${CI:-} == true ]] && die "$* (CI=true requires it)"
    printf '%s: SKIP: %s\n' "$SCRIPT" "$*"
    exit 0
}

# phase NAME: ends the phase before (see phase_end) and starts a timed one, with a heading.
# phase_end: ends the current phase, prints its time and keeps it in PHASES (name, seconds).
PHASES=() PHASE_NAME="" PHASE_START=0
phase() {
    phase_end
    PHASE_NAME=$1 PHASE_START=$EPOCHREALTIME
    log "$1"
}
phase_end() {
    [[ -n $PHASE_NAME ]] || return 0
    local took
    took=$(awk -v a="$PHASE_START" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
    PHASES+=("$(printf '%-28s %7s s' "$PHASE_NAME" "$took")")
    printf '== %s: %s s\n' "$PHASE_NAME" "$took" >&2
    PHASE_NAME=""
}

# Bash has no floating point; these use awk.
# cmp X OP Y: true when X OP Y (OP one of < <= == >= >).
cmp() { awk -v a="$1" -v b="$3" "BEGIN { exit !(a $2 b) }"; }
# div X Y: X ÷ Y to three decimals, "nan" when Y is not positive.
div() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "nan" }'; }
# mean X...: the mean, rounded to a whole number.
mean() { printf '%s\n' "$@" | awk '{ s += $1 } END { printf "%.0f", s / NR }'; }
# median X...: the middle value (the mean of the two middle ones, to three decimals).
median() {
    printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 }
        END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# ticks PID: the CPU time (user + system, in clock ticks) the process has used; 0 for "-".
ticks() { if [[ $1 == - ]]; then echo 0; else awk '{print $14 + $15}' "/proc/$1/stat"; fi; }
# shellcheck disable=SC2034 # used by the scripts that source this
TCK=$(getconf CLK_TCK)
