#!/usr/bin/env bash
# scripts/device_batch.sh — several scripts/device_run.sh parts in parallel groups on the GPU machine, every log packed
# into one archive. The device tool returns at most 8 files from $OUT (16 MiB each), and a command cut at its time limit
# returns what $OUT holds then: so each group writes under a scratch folder, and the whole folder is packed into
# $OUT/all.tgz every 20 s and once more at the end (2026-12-05: a call that wrote 28 logs into $OUT got 8 of them back).
# Usage: scripts/device_batch.sh BIN_DIR SECONDS NAME=PART[,PART...] [NAME=PART...]
#   SECONDS: stop waiting for the groups after this many seconds (leave the device call's limit a margin for the last
#   packing); each group runs under `timeout SECONDS`. Groups share the host's cores: figures meant as timings belong
#   in a group of their own, or in a call of their own.
# Example: scripts/device_batch.sh devbin 450 audit=audit conv=conv-mutation plug=plugin-rows,plugin-attention
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${1:?BIN_DIR}
LIMIT=${2:?SECONDS}
shift 2
REAL=${OUT:-out}
W=$(mktemp -d /tmp/fpcert_batch.XXXX)/w
mkdir -p "$W" "$REAL"
S=$(date +%s)
pack() { tar -C "$(dirname "$W")" -czf "$REAL/all.tmp" w 2>/dev/null && mv "$REAL/all.tmp" "$REAL/all.tgz"; }
( while true; do sleep 20; pack; done ) &
PACKER=$!
pids=()
for g in "$@"; do
  name=${g%%=*}
  parts=${g#*=}
  mkdir -p "$W/$name"
  ( OUT="$W/$name" timeout "$LIMIT" scripts/device_run.sh "$BIN" "$parts" > "$W/$name/console.txt" 2>&1
    echo "[$(( $(date +%s) - S )) s] $name ($parts) rc=$?" >> "$W/times.txt" ) &
  pids+=($!)
done
alive() { for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && return 0; done; return 1; }
while [ $(( $(date +%s) - S )) -lt "$LIMIT" ] && alive; do sleep 3; done
echo "[$(( $(date +%s) - S )) s] done waiting" >> "$W/times.txt"
kill "$PACKER" 2>/dev/null
pack
cat "$W/times.txt"
