#!/usr/bin/env bash
# The README's curl session: two owners meet, become mates, a walk is sent and accepted; one of them
# deletes the account, the other moves to a new phone.
# Needs a running server (scripts/serve) and jq-free: JSON fields are read with python3.
set -euo pipefail
base="${BASE:-http://127.0.0.1:8080}"
field() { python3 -c "import json,sys; print(json.load(sys.stdin)$1)"; }
say() { printf '\n# %s\n' "$*"; }

say "Mia and Leo sign up (anonymously, with their dogs' profiles)"
mia=$(curl -fsS -X POST "$base/v1/users" -H 'Content-Type: application/json' \
  -d '{"nickname":"mia","dog_name":"Bori","age":3,"sex":"female","neutered":true,"size":"small","keywords":["smart","shy"]}')
leo=$(curl -fsS -X POST "$base/v1/users" -H 'Content-Type: application/json' \
  -d '{"nickname":"leo","dog_name":"Max","age":5,"sex":"male","neutered":false,"size":"large","keywords":["energetic"]}')
MIA=$(echo "$mia" | field '["token"]'); LEO=$(echo "$leo" | field '["token"]')
LEO_ID=$(echo "$leo" | field '["user_id"]'); MIA_ID=$(echo "$mia" | field '["user_id"]')
echo "mia=$MIA_ID leo=$LEO_ID"

say "They meet in the park: Leo's phone hands Mia a drop token with his profile card"
drop=$(curl -fsS -X POST "$base/v1/me/drop-tokens" -H "Authorization: Bearer $LEO")
echo "$drop"
DROP=$(echo "$drop" | field '["drop_token"]')

say "Mia asks Leo to be mates (RequestMate); Leo accepts (AcceptMate)"
req=$(curl -fsS -X POST "$base/v1/mate-requests" -H "Authorization: Bearer $MIA" -H 'Content-Type: application/json' \
  -H 'Idempotency-Key: mia-asks-leo-1' -d "{\"to\":\"$LEO_ID\",\"drop_token\":\"$DROP\"}")
REQ=$(echo "$req" | field '["request_id"]')
curl -fsS -X POST "$base/v1/mate-requests/$REQ/accept" -H "Authorization: Bearer $LEO" | field '["status"]'

say "Mia sends a walk request (SendWalk); the answer carries Log-Position"
walk=$(curl -fsS -D /tmp/story-headers -X POST "$base/v1/walks" -H "Authorization: Bearer $MIA" -H 'Content-Type: application/json' \
  -d '{"to":"'"$LEO_ID"'","message":"Seoul Forest at 5?","latitude":37.5444,"longitude":127.0374,"place_name":"Seoul Forest"}')
WALK=$(echo "$walk" | field '["walk_id"]')
POS=$(grep -i '^log-position:' /tmp/story-headers | tr -d '\r' | cut -d' ' -f2)
echo "walk=$WALK log-position=$POS"

say "Leo's inbox, read-your-writes: at least that position"
curl -fsS "$base/v1/me/notifications" -H "Authorization: Bearer $LEO" -H "Min-Log-Position: $POS" |
  field '["items"][0]["category"]'

say "Leo accepts the walk (RespondWalk); Mia sees it accepted"
ans=$(curl -fsS -D /tmp/story-headers -X POST "$base/v1/walks/$WALK/response" -H "Authorization: Bearer $LEO" \
  -H 'Content-Type: application/json' -d '{"answer":"accept"}')
POS=$(grep -i '^log-position:' /tmp/story-headers | tr -d '\r' | cut -d' ' -f2)
curl -fsS "$base/v1/walks/$WALK" -H "Authorization: Bearer $MIA" -H "Min-Log-Position: $POS" | field '["status"]'
curl -fsS "$base/v1/me/mates" -H "Authorization: Bearer $MIA" | field '["items"][0]["nickname"]'

say "After the walk, Mia uploads the route she recorded (GPX, tied to the walk); a home zone hides its ends from Leo"
python3 - > /tmp/story-walk.gpx <<'PY'
import math, datetime
lat0, lon0, r = 37.5444, 127.0374, 300.0
t0 = datetime.datetime(2026, 11, 25, 8, 0, tzinfo=datetime.timezone.utc)
print('<?xml version="1.0" encoding="UTF-8"?><gpx version="1.1" creator="story"><trk><trkseg>')
for s in range(0, 1347):  # a 1,885 m loop at 1.4 m/s, one fix a second
    a = s * 1.4 / r
    lat = lat0 + (r - r * math.cos(a)) / 111_000
    lon = lon0 + r * math.sin(a) / (111_000 * math.cos(math.radians(lat0)))
    print(f'<trkpt lat="{lat:.6f}" lon="{lon:.6f}"><time>{(t0 + datetime.timedelta(seconds=s)).isoformat().replace("+00:00", "Z")}</time></trkpt>')
print('</trkseg></trk></gpx>')
PY
curl -fsS -o /dev/null -w 'PUT /v1/me/privacy-zones → %{http_code}\n' -X PUT "$base/v1/me/privacy-zones" -H "Authorization: Bearer $MIA" \
  -H 'Content-Type: application/json' -d '{"zones":[{"latitude":37.5444,"longitude":127.0374,"radius_m":400}]}'
log=$(curl -fsS -D /tmp/story-headers -X POST "$base/v1/walk-logs?walk_id=$WALK" -H "Authorization: Bearer $MIA" \
  -H 'Content-Type: application/gpx+xml' --data-binary @/tmp/story-walk.gpx)
LOG=$(echo "$log" | field '["walk_log_id"]')
POS=$(grep -i '^log-position:' /tmp/story-headers | tr -d '\r' | cut -d' ' -f2)
echo "$log" | python3 -c 'import json,sys; d=json.load(sys.stdin); print({k: d[k] for k in ("distance_m","elapsed_seconds","moving_seconds","bounds")})'
curl -fsS "$base/v1/walk-logs/$LOG" -H "Authorization: Bearer $LEO" -H "Min-Log-Position: $POS" | field '["bounds"]'
curl -fsS "$base/v1/me/walk-stats?tz=Asia/Seoul" -H "Authorization: Bearer $MIA" -H "Min-Log-Position: $POS" | field '["this_week"]'
curl -fsS "$base/v1/walk-logs/$LOG/gpx" -H "Authorization: Bearer $MIA" | python3 -c 'import sys; print(sys.stdin.read()[:160])' 

say "Is the nickname 보리 free? (public, as onboarding checks while the owner types)"
curl -fsS "$base/v1/nicknames/%EB%B3%B4%EB%A6%AC"; echo

say "Mia reports Leo about the walk; an operator (SNIFFMEET_ADMIN_TOKEN) reviews and resolves it"
REPORT=$(curl -fsS -X POST "$base/v1/reports" -H "Authorization: Bearer $MIA" -H 'Content-Type: application/json' \
  -d "{\"user_id\":\"$LEO_ID\",\"reason\":\"harassment\",\"walk_id\":\"$WALK\",\"note\":\"kept asking\"}" | field '["report_id"]')
echo "report $REPORT"
if [ -n "${SNIFFMEET_ADMIN_TOKEN:-}" ]; then
  sleep 0.2
  curl -fsS "$base/v1/admin/reports" -H "Authorization: Bearer $SNIFFMEET_ADMIN_TOKEN" | field '["items"][0]["walk_message"]'
  curl -fsS -X POST "$base/v1/admin/reports/$REPORT/resolve" -H "Authorization: Bearer $SNIFFMEET_ADMIN_TOKEN" | field '["status"]'
fi

say "Mia blocks Leo (unpaired; her card is 404 to him), lists her blocks, unblocks; then empties her inbox"
blk=$(curl -fsS -D /tmp/story-headers -o /dev/null -w '%{http_code}' -X PUT "$base/v1/me/blocks/$LEO_ID" -H "Authorization: Bearer $MIA")
POS=$(grep -i '^log-position:' /tmp/story-headers | tr -d '\r' | cut -d' ' -f2)
echo "PUT /v1/me/blocks/{leo} → $blk"
curl -fsS "$base/v1/me/blocks" -H "Authorization: Bearer $MIA" -H "Min-Log-Position: $POS" | field '["items"][0]["nickname"]'
curl -sS -o /dev/null -w 'Leo reads Mia'"'"'s card → %{http_code}\n' "$base/v1/users/$MIA_ID" -H "Authorization: Bearer $LEO" -H "Min-Log-Position: $POS"
curl -fsS -o /dev/null -w 'DELETE /v1/me/blocks/{leo} → %{http_code}\n' -X DELETE "$base/v1/me/blocks/$LEO_ID" -H "Authorization: Bearer $MIA"
curl -fsS -o /dev/null -w 'DELETE /v1/me/notifications → %{http_code}\n' -X DELETE "$base/v1/me/notifications" -H "Authorization: Bearer $MIA"

say "Leo deletes his account: Mia's mates list no longer shows him, and his token stops working"
gone=$(curl -fsS -D /tmp/story-headers -o /dev/null -w '%{http_code}' -X DELETE "$base/v1/me" -H "Authorization: Bearer $LEO")
POS=$(grep -i '^log-position:' /tmp/story-headers | tr -d '\r' | cut -d' ' -f2)
echo "DELETE /v1/me → $gone"
curl -fsS "$base/v1/me/mates" -H "Authorization: Bearer $MIA" -H "Min-Log-Position: $POS" | field '["items"]'
curl -sS -o /dev/null -w 'GET /v1/me with his old token → %{http_code}\n' "$base/v1/me" -H "Authorization: Bearer $LEO"

say "Mia moves to a new phone with a transfer code, then signs the old one out"
code=$(curl -fsS -X POST "$base/v1/me/transfer-codes" -H "Authorization: Bearer $MIA" | field '["transfer_code"]')
MIA2=$(curl -fsS -X POST "$base/v1/sessions" -H 'Content-Type: application/json' -d "{\"transfer_code\":\"$code\"}" | field '["token"]')
curl -fsS "$base/v1/me/sessions" -H "Authorization: Bearer $MIA2" | field '["items"]'
OLD=$(curl -fsS "$base/v1/me/sessions" -H "Authorization: Bearer $MIA2" | field '["items"][1]["session_id"]')
curl -fsS -o /dev/null -w 'DELETE /v1/me/sessions/{old phone} → %{http_code}\n' -X DELETE "$base/v1/me/sessions/$OLD" -H "Authorization: Bearer $MIA2"
curl -sS -o /dev/null -w 'GET /v1/me with the old phone'"'"'s token → %{http_code}\n' "$base/v1/me" -H "Authorization: Bearer $MIA"
