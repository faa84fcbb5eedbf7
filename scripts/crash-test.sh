#!/usr/bin/env bash
# kill -9 of the server under load, then restart: every command that got a 2xx must be in the
# log (and readable), and `sniffmeet verify` must pass.
#
#   scripts/crash-test.sh            # CRASH_SECONDS=5 of load, CRASH_CLIENTS=8 parallel clients
#
# Uses the embedded cluster in a throw-away folder (or DATABASE_URL). Only 127.0.0.1 is contacted.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup

port="${CRASH_PORT:-18484}"
base="http://127.0.0.1:${port}"
seconds="${CRASH_SECONDS:-5}"
clients="${CRASH_CLIENTS:-8}"
work="$(mktemp -d /tmp/sniffmeet-crash.XXXXXX)"
chmod 755 "$work"
export SNIFFMEET_DATA_DIR="$work/data"

swift build --product sniffmeet
bin="$(swift build --show-bin-path)/sniffmeet"

server=""
start_server() {
    "$bin" serve --host 127.0.0.1 --port "$port" >>"$work/server.log" 2>&1 &
    server=$!
    for _ in $(seq 1 120); do
        curl -fsS "$base/readyz" >/dev/null 2>&1 && return 0
        kill -0 "$server" 2>/dev/null || { tail -20 "$work/server.log"; return 1; }
        sleep 0.5
    done
    return 1
}
stop_cluster() {
    # A kill -9'd server leaves the embedded PostgreSQL running; stop it as its owner.
    [[ -n "${DATABASE_URL:-}" || ! -f "$SNIFFMEET_DATA_DIR/postmaster.pid" ]] && return 0
    local pg_ctl owner
    pg_ctl="$(ls /usr/lib/postgresql/*/bin/pg_ctl 2>/dev/null | sort -V | tail -1)"
    owner="$(stat -c %U "$SNIFFMEET_DATA_DIR")"
    if [[ "$(id -un)" == "$owner" ]]; then "$pg_ctl" stop -D "$SNIFFMEET_DATA_DIR" -m fast >/dev/null
    else /usr/sbin/runuser -u "$owner" -- "$pg_ctl" stop -D "$SNIFFMEET_DATA_DIR" -m fast >/dev/null; fi
}
cleanup() {
    [[ -n "$server" ]] && { kill -TERM "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; }
    stop_cluster || true
    if [[ -n "${KEEP_CRASH_DIR:-}" ]]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

field() { python3 -c "import json,sys; print(json.load(sys.stdin)$1)"; }
start_server
signup() {
    curl -fsS -X POST "$base/v1/users" -H 'Content-Type: application/json' \
        -d "{\"nickname\":\"$1\",\"dog_name\":\"Dog\",\"age\":3,\"sex\":\"male\",\"neutered\":false,\"size\":\"small\",\"keywords\":[\"smart\"]}"
}
a="$(signup crash1)"; b="$(signup crash2)"
A=$(echo "$a" | field '["token"]'); B=$(echo "$b" | field '["token"]'); B_ID=$(echo "$b" | field '["user_id"]')
drop=$(curl -fsS -X POST "$base/v1/me/drop-tokens" -H "Authorization: Bearer $B" | field '["drop_token"]')
req=$(curl -fsS -X POST "$base/v1/mate-requests" -H "Authorization: Bearer $A" -H 'Content-Type: application/json' \
    -d "{\"to\":\"$B_ID\",\"drop_token\":\"$drop\"}" | field '["request_id"]')
curl -fsS -X POST "$base/v1/mate-requests/$req/accept" -H "Authorization: Bearer $B" >/dev/null

# Load: each client sends walks and records the id of every one answered 201.
load() {
    local n=0 out
    while true; do
        n=$((n + 1))
        out=$(curl -sS -m 5 -w '\n%{http_code}' -X POST "$base/v1/walks" -H "Authorization: Bearer $A" \
            -H 'Content-Type: application/json' -H "Idempotency-Key: c$1-$n" \
            -d "{\"to\":\"$B_ID\",\"message\":\"walk $1-$n\",\"latitude\":1,\"longitude\":2}" 2>/dev/null) || continue
        if [[ "$(tail -1 <<<"$out")" == "201" ]]; then head -1 <<<"$out" | field '["walk_id"]' >>"$work/acked-$1"; fi
    done
}
pids=()
for i in $(seq 1 "$clients"); do load "$i" & pids+=($!); done
sleep "$seconds"
kill -9 "$server"
wait "$server" 2>/dev/null || true
sleep 0.5
for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
wait "${pids[@]}" 2>/dev/null || true
acked=$(cat "$work"/acked-* 2>/dev/null | sort -u)
count=$(grep -c . <<<"$acked" || true)
echo "killed the server with -9 after ${seconds}s: $count walks were answered 201"
[[ "$count" -gt 0 ]] || { echo "no command succeeded before the kill"; exit 1; }

server=""
start_server
# Every acknowledged walk must be readable once the read models include the log's head.
missing=0
head=$(curl -fsS "$base/v1/admin/projections" -H "Authorization: Bearer ${SNIFFMEET_ADMIN_TOKEN:-x}" 2>/dev/null | field '["head"]' || echo "")
for id in $acked; do
    status=$(curl -sS -o /dev/null -w '%{http_code}' "$base/v1/walks/$id" -H "Authorization: Bearer $A" \
        ${head:+-H "Min-Log-Position: $head"})
    [[ "$status" == "200" ]] || { echo "acknowledged walk $id answers $status after the restart"; missing=$((missing + 1)); }
done
kill -TERM "$server"; wait "$server" 2>/dev/null || true; server=""
"$bin" verify >"$work/verify.log" 2>&1 || { cat "$work/verify.log"; echo "verify failed"; exit 1; }
[[ "$missing" -eq 0 ]] || { echo "$missing acknowledged walks are missing"; exit 1; }
echo "crash test: all $count acknowledged walks survived kill -9; verify passed"
