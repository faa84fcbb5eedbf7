#!/usr/bin/env bash
# Fuzzes the HTTP API with schemathesis against the OpenAPI document, on a live local server.
# Fails on any 5xx and on any answer that breaks the document (status, content type, headers,
# schema); the thorough mode runs every check schemathesis has (`--checks all`).
#
#   scripts/fuzz.sh                  # thorough: every check for FUZZ_MINUTES (10): half for the
#                                    # coverage and fuzzing phases, half for the stateful phase
#   FUZZ_SHORT=1 scripts/fuzz.sh     # short mode for CI (under a minute): conformance checks
#   FUZZ_SEED=N                      # repeat a thorough run's generation (it prints its seed)
#   FUZZ_BIN=path/to/sniffmeet       # fuzz that binary instead of building one
#   KEEP_FUZZ_DIR=1                  # keep the server log and schemathesis' reports
#
# Other users keep the fuzzing user busy during the run: they become its mates, ask it to be
# mates, wait for its answer and send it walks, so that the links of openapi.json (from the
# answers' ids to accept, decline, cancel, respond, dismiss, unpair and the card) lead the
# stateful phase to real requests, walks and inbox entries, not only to 404s.
#
# DATABASE_URL selects the database (with a throw-away SNIFFMEET_MASTER_KEY unless one is set);
# without it `sniffmeet serve` starts its embedded cluster in a throw-away data folder. Only
# 127.0.0.1 is ever contacted. It prints a summary at the end: operations tested, test cases
# (requests) by status class, distinct failures, time.
set -euo pipefail
cd "$(dirname "$0")/.."

port="${FUZZ_PORT:-18080}"
base="http://127.0.0.1:${port}"
minutes="${FUZZ_MINUTES:-10}"
# Pinned: the options and check names below are those of this version.
schemathesis_version="4.32.5"
work="$(mktemp -d /tmp/sniffmeet-fuzz.XXXXXX)"
# The embedded cluster runs as the postgres user when we are root: it must reach its data folder.
chmod 755 "$work"

source scripts/setup
# curl talks to the server; python3-venv holds schemathesis (PyPI) away from the system Python.
need=()
command -v curl >/dev/null 2>&1 || need+=(curl)
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || need+=(python3-venv)
if [ ${#need[@]} -gt 0 ]; then
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}"
fi

venv=".build/fuzz-venv"
if ! "$venv/bin/schemathesis" --version 2>/dev/null | grep -qF "version $schemathesis_version"; then
    [[ -x "$venv/bin/pip" ]] || python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet "schemathesis==$schemathesis_version"
fi

if [[ -n "${FUZZ_BIN:-}" ]]; then
    bin="$FUZZ_BIN"
else
    swift build --product sniffmeet
    bin="$(swift build --show-bin-path)/sniffmeet"
fi

export SNIFFMEET_ADMIN_TOKEN="fuzz-admin"
export SNIFFMEET_DATA_DIR="$work/data"
if [[ -n "${DATABASE_URL:-}" && -z "${SNIFFMEET_MASTER_KEY:-}${SNIFFMEET_MASTER_KEY_FILE:-}" ]]; then
    SNIFFMEET_MASTER_KEY="$(python3 -c 'import base64, os; print(base64.b64encode(os.urandom(32)).decode())')"
    export SNIFFMEET_MASTER_KEY
fi
# The fuzzer floods the server from one address as one user: budgets would answer it 429.
export SNIFFMEET_RATE_LIMITS=off
# Walks stay answerable for the whole run (expiry has its own tests), so links reach RespondWalk.
export SNIFFMEET_WALK_TTL_SECONDS=86400
"$bin" serve --host 127.0.0.1 --port "$port" >"$work/server.log" 2>&1 &
server=$!
others=""
cleanup() {
    [[ -z "$others" ]] || kill "$others" 2>/dev/null || true
    kill -TERM "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
    if [[ -n "${KEEP_FUZZ_DIR:-}" ]]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

for _ in $(seq 1 120); do
    if curl -fsS "$base/readyz" >/dev/null 2>&1; then break; fi
    if ! kill -0 "$server" 2>/dev/null; then cat "$work/server.log"; exit 1; fi
    sleep 0.5
done
curl -fsS "$base/readyz" >/dev/null

# The fuzzing user and the others. `seed` signs the fuzzing user up, gives it mates who send it
# walks, requests to answer and requests of its own, and prints its token; `others` then keeps
# doing so every few seconds until its deadline (or until it is stopped), so that the newest item
# of each list, which the links follow, is still open whenever the stateful phase looks.
cat >"$work/users.py" <<'EOF'
import json, os, sys, time, urllib.request
base, mode, state = sys.argv[1], sys.argv[2], sys.argv[3]
# Nicknames are unique: a run on a database that is not new needs its own (2 letters + 6).
tag = "".join(chr(97 + b % 26) for b in os.urandom(2))
def call(method, path, token=None, body=None):
    request = urllib.request.Request(base + path, method=method, data=None if body is None else json.dumps(body).encode())
    request.add_header("Content-Type", "application/json")
    if token: request.add_header("Authorization", "Bearer " + token)
    with urllib.request.urlopen(request, timeout=10) as answer:
        text = answer.read()
        return json.loads(text) if text else None
def sign_up(nickname):
    answer = call("POST", "/v1/users", body={"nickname": tag + nickname, "dog_name": "Fuzz", "age": 3, "sex": "male",
                                             "neutered": False, "size": "small", "keywords": ["smart"]})
    return answer["user_id"], answer["token"]
def ask(asker, asked):
    """`asker` requests `asked` with a drop token `asked` handed out; returns the request id."""
    drop = call("POST", "/v1/me/drop-tokens", asked[1])["drop_token"]
    return call("POST", "/v1/mate-requests", asker[1], {"to": asked[0], "drop_token": drop})["request_id"]
def walk(sender, to, message):
    call("POST", "/v1/walks", sender[1], {"to": to[0], "message": message, "latitude": 37.5444, "longitude": 127.0374,
                                          "place_name": "Seoul Forest"})
def round(fuzzer, name):
    """A new mate who gets a walk and sends one, a request of the fuzzer's own, a request to answer:
    unfiltered lists show first what the fuzzing user can answer."""
    mate = sign_up(name + "m")
    call("POST", f"/v1/mate-requests/{ask(fuzzer, mate)}/accept", mate[1])
    walk(fuzzer, mate, "Shall we?")
    walk(mate, fuzzer, "Seoul Forest at 5?")
    ask(fuzzer, sign_up(name + "b"))
    ask(sign_up(name + "a"), fuzzer)
if mode == "seed":
    fuzzer = sign_up("fuzzer")
    for i in range(3):
        round(fuzzer, f"s{i}")
    json.dump(fuzzer, open(state, "w"))
    print(fuzzer[1])
else:
    fuzzer, deadline = json.load(open(state)), time.monotonic() + float(sys.argv[4])
    for i in range(10000):
        if time.monotonic() > deadline:
            break
        time.sleep(5)
        try:
            round(fuzzer, f"r{i}")
        except Exception as error:  # the fuzzer may have changed the fuzzing user meanwhile; go on
            print(f"others: round {i}: {error}", file=sys.stderr)
EOF
token="$(python3 "$work/users.py" "$base" seed "$work/fuzzer.json")"
python3 "$work/users.py" "$base" others "$work/fuzzer.json" $((minutes * 60 + 300)) 2>"$work/others.log" &
others=$!

# What schemathesis flags but API.md does on purpose, each dropped only when the answer shows it
# is that case; every drop is counted and printed at the end.
cat >"$work/hooks.py" <<'EOF'
import atexit, collections, datetime, json, os, unicodedata, urllib.parse, zoneinfo
import schemathesis

FUZZER_ID = json.load(open(os.environ["FUZZ_STATE"]))[0]  # the fuzzing user's own id

dropped = collections.Counter()
handed_out = set()  # every Log-Position and next_cursor the server gave
atexit.register(lambda: dropped and print("fuzz: failures taken as API.md's intent: " +
                                          ", ".join(f"{n} {why}" for why, n in dropped.most_common())))
TEXT_FIELDS = {"nickname", "dog_name", "message", "place_name", "profile_image", "text", "note"}

def error_of(response):
    try:
        return json.loads(response.content)["error"]
    except Exception:
        return {}

def sent_body(response):
    try:
        return json.loads(response.request.body or b"null")
    except Exception:
        return None

def joins_characters(text):
    """Whether the text has code points that join the one before into one user-perceived character
    (marks, format characters such as ZWJ, Hangul jamo, regional indicators, emoji modifiers): then its
    length in characters is less than its length in code points, which is all JSON Schema counts."""
    for c in unicodedata.normalize("NFC", text):
        o = ord(c)
        if (unicodedata.category(c) in ("Mn", "Mc", "Me", "Cf") or 0x1100 <= o <= 0x11FF or 0xA960 <= o <= 0xA97F
                or 0xD7B0 <= o <= 0xD7FF or 0x1F1E6 <= o <= 0x1F1FF or 0x1F3FB <= o <= 0x1F3FF):
            return True
    return False

@schemathesis.hook
def after_call(context, case, response):
    handed_out.update(response.headers.get("log-position", []))
    if response.content[:1] == b"{":
        try:
            handed_out.add(json.loads(response.content).get("next_cursor"))
        except Exception:
            pass

def sent_value(response, field):
    if field == "cursor":
        return urllib.parse.parse_qs(urllib.parse.urlsplit(response.request.url).query).get("cursor", [None])[0]
    return response.request.headers.get(field)

def intended(failure, response):
    """Why API.md refuses this on purpose, or None for a real failure."""
    kind = type(failure).__name__
    error = error_of(response)
    code, field, message = error.get("code"), error.get("field"), error.get("message", "")
    if kind == "RejectedPositiveData":
        # Opaque values the server hands out (`next_cursor`, `Log-Position`): one the fuzzer made
        # up, that the server never gave, is no value of this server, whatever its shape.
        if response.status_code == 400 and code == "validation_failed" and field in ("cursor", "Min-Log-Position") \
                and sent_value(response, field) not in handed_out:
            return f"made-up {field}"
        # The same Idempotency-Key with another request (the fuzzer reuses short keys).
        if response.status_code == 422 and code == "idempotency_key_reused":
            return "reused Idempotency-Key"
        # Free-text rules JSON Schema cannot say (API.md "Text"), checked against what was sent.
        body = sent_body(response)
        value = body.get(field) if isinstance(body, dict) and field in TEXT_FIELDS else None
        path = urllib.parse.unquote(urllib.parse.urlsplit(response.request.url).path)
        if field == "nickname" and path.startswith("/v1/nicknames/"):
            value = path[len("/v1/nicknames/"):]
        # Blocking or unblocking myself: my own id is a UUID like any other, and is refused.
        if response.status_code == 400 and code == "validation_failed" and field == "user_id" \
                and path == f"/v1/me/blocks/{FUZZER_ID}":
            return "blocking or unblocking myself"
        # `profile_image` must be the id of a photo of mine: which ids are is no shape JSON Schema has.
        if response.status_code == 400 and code == "validation_failed" and field == "profile_image" \
                and "photo of mine" in message and isinstance(value, str):
            return "profile_image not a photo of mine"
        # A chat message's `photo_id` must be a photo uploaded to that conversation: the same.
        if response.status_code == 400 and code == "validation_failed" and field == "photo_id" \
                and "uploaded to this conversation" in message and isinstance(body, dict) and "photo_id" in body:
            return "photo_id not a photo of this conversation"
        # A walk log keeps only accurate fixes without jumps (API.md "Walk log"); what is left is
        # known only after cleaning.
        if response.status_code == 400 and code == "validation_failed" and field == "points" \
                and "once inaccurate fixes and jumps are dropped" in message:
            return "too few points left after cleaning"
        # A walk log's fixes come in time order: checked against the times sent.
        if response.status_code == 400 and code == "validation_failed" and field == "points.time" \
                and "earlier than the point before" in message and isinstance(body, dict):
            try:
                times = [datetime.datetime.fromisoformat(p["time"].replace("Z", "+00:00")) for p in body["points"]]
                if any(b < a for a, b in zip(times, times[1:])):
                    return "walk log fixes out of time order"
            except Exception:
                pass
        # A walk lasts at most 12 hours: from the first fix's time to the last's, as sent.
        if response.status_code == 400 and code == "validation_failed" and field == "points" \
                and "at most 12 hours" in message and isinstance(body, dict):
            try:
                times = [datetime.datetime.fromisoformat(p["time"].replace("Z", "+00:00")) for p in body["points"]]
                if max(times) - min(times) > datetime.timedelta(hours=12):
                    return "walk log longer than 12 hours"
            except Exception:
                pass
        # A GPX upload is a string to JSON Schema; that it is a GPX document is the server's to see.
        if response.status_code == 400 and code == "validation_failed" and field == "gpx" \
                and message.startswith("not a well-formed GPX file"):
            import xml.etree.ElementTree as ElementTree
            try:
                gpx = response.request.body.decode() if isinstance(response.request.body, bytes) else str(response.request.body or "")
                if ElementTree.fromstring(gpx).tag.rsplit("}", 1)[-1] != "gpx":
                    return "GPX upload not a GPX document"
            except Exception:
                return "GPX upload not a GPX document"
        # A chat message has a text or a photo (or both): "one of two fields" as sent.
        if response.status_code == 400 and code == "validation_failed" and field == "text" \
                and "needs a text or a photo" in message and isinstance(body, dict) \
                and not body.get("text") and not body.get("photo_id"):
            return "chat message with neither text nor photo"
        # `tz` is an IANA time zone name: a list JSON Schema does not hold; checked against Python's.
        if response.status_code == 400 and code == "validation_failed" and field == "tz":
            tz = urllib.parse.parse_qs(urllib.parse.urlsplit(response.request.url).query,
                                       keep_blank_values=True).get("tz", [None])[0]
            if tz is not None and tz not in zoneinfo.available_timezones():
                return "tz not an IANA time zone"
        if response.status_code == 400 and code == "validation_failed" and isinstance(value, str):
            if "unassigned code points" in message and any(unicodedata.category(c) == "Cn" for c in value):
                return "unassigned code point"
            if "characters" in message and message.startswith(f"{field}: must be") and joins_characters(value):
                return "length in user-perceived characters"
            if "must not mix Latin" in message:
                folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", value).casefold())
                scripts = {unicodedata.name(c, "").split(" ")[0] for c in folded if c.isalpha()}
                if "LATIN" in scripts and scripts & {"CYRILLIC", "GREEK"}:
                    return "nickname mixing Latin with Cyrillic or Greek"
    if kind == "UseAfterFree":
        # DELETE /v1/walks/{id} cancels the walk; it stays readable with status `cancelled`.
        if failure.free.startswith("DELETE /v1/walks/") and failure.usage.startswith("GET /v1/walks/"):
            status = json.loads(response.content or b"{}").get("status")
            if status == "cancelled":
                return "cancelled walk still readable"
            # Read-your-writes is asked for with Min-Log-Position (API.md); a read right after the
            # cancel without it may still see the walk pending in the read model.
            if status == "pending" and sent_value(response, "Min-Log-Position") is None:
                return "read before the cancel was projected (no Min-Log-Position)"
    return None

@schemathesis.hook
def filter_failure(context, failure, case, response):
    why = intended(failure, response)
    if why:
        dropped[why] += 1
    return why is None
EOF
export SCHEMATHESIS_HOOKS="$work/hooks.py"
export FUZZ_STATE="$work/fuzzer.json"

# The admin routes (/v1/admin/...) get runs of their own with the admin token
# (SNIFFMEET_ADMIN_TOKEN above), every other route the user's token.
: >"$work/schemathesis.toml"

# The SSE stream is one request that lasts up to 10 minutes; GatewayTests cover it. Deleting the
# account and signing out would end the fuzzing user's token for the rest of the run (every
# later answer a 401): GatewayTests cover those too.
common=(
    --url "$base"
    --exclude-operation-id streamNotifications
    --exclude-operation-id deleteMe
    --exclude-operation-id signOut
    --exclude-operation-id signOutElsewhere
    --request-timeout 10
    --workers 1
    --report ndjson --report-dir "$work/report"
)
runs=()
half=""; admin_time=""
if [[ -n "${FUZZ_SHORT:-}" ]]; then
    # CI: every answer must match the document; a few examples per operation, a short stateful phase.
    runs+=("--phases examples,coverage,fuzzing,stateful --max-examples 25 --generation-deterministic
            --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance")
    echo "fuzz: short run, conformance checks, 25 examples per operation"
else
    # Half the time for examples, coverage and fuzzing (fuzzing repeated until it is spent), half
    # for the stateful phase alone, which follows the links from answer to answer (also repeated).
    seed="${FUZZ_SEED:-$RANDOM$RANDOM}"
    half=$((minutes * 30))
    # The five admin operations' share of each half.
    admin_time=$((half / 8))
    half=$((half - admin_time))
    runs+=("--phases examples,coverage,fuzzing --checks all --max-response-time 10 --max-time $half --seed $seed"
           "--phases stateful --checks all --max-response-time 10 --max-time $half --seed $seed")
    echo "fuzz: thorough run, every check, ${minutes} minutes (half fuzzing, half stateful), seed $seed"
fi

start=$SECONDS
status=0
for run in "${runs[@]}"; do
    # shellcheck disable=SC2086 # each run is a list of options
    "$venv/bin/schemathesis" --config-file "$work/schemathesis.toml" run "$PWD/Sources/Gateway/openapi.json" \
        "${common[@]}" --header "Authorization: Bearer $token" --exclude-path-regex '^/v1/admin/' $run || status=$?
    # shellcheck disable=SC2086
    "$venv/bin/schemathesis" --config-file "$work/schemathesis.toml" run "$PWD/Sources/Gateway/openapi.json" \
        "${common[@]}" --header "Authorization: Bearer $SNIFFMEET_ADMIN_TOKEN" --include-path-regex '^/v1/admin/' \
        ${run//--max-time $half/--max-time $admin_time} || status=$?
done
elapsed=$((SECONDS - start))

# The numbers, from schemathesis' event streams: operations of the document that were tested,
# test cases (requests sent) by status class, distinct failures.
"$venv/bin/python" - "$work/report" "$elapsed" Sources/Gateway/openapi.json <<'EOF' || true
import collections, glob, json, sys
document = json.load(open(sys.argv[3]))
documented = {(method.upper(), path) for path, item in document["paths"].items() for method in item}
operations, requests, failures, statuses = set(), 0, set(), collections.Counter()
for path in glob.glob(sys.argv[1] + "/*.ndjson"):
    for line in open(path):
        if not line.startswith('{"ScenarioFinished"'):
            continue
        recorder = json.loads(line)["ScenarioFinished"]["recorder"]
        cases = recorder.get("cases", {})
        for case_id, interaction in recorder.get("interactions", {}).items():
            requests += 1
            value = cases.get(case_id, {}).get("value", {})
            if (value.get("method", "").upper(), value.get("path")) in documented:
                operations.add((value["method"].upper(), value["path"]))
            statuses[interaction.get("response", {}).get("status_code", 0) // 100] += 1
        for checks in recorder.get("checks", {}).values():
            for check in checks:
                if check["status"] == "failure":
                    failure = check.get("failure_info", {}).get("failure", {})
                    failures.add((failure.get("code"), failure.get("operation"), failure.get("message", "").split("\n")[0]))
minutes, seconds = divmod(int(sys.argv[2]), 60)
print(f"fuzz summary: {len(operations)} of {len(documented)} operations, {requests} test cases "
      f"({', '.join(f'{n} {k}xx' for k, n in sorted(statuses.items()))}), {len(failures)} distinct failures, "
      f"{minutes} min {seconds} s")
EOF

if grep -q 'status=5[0-9][0-9]' "$work/server.log"; then
    echo "the server log shows 5xx answers:"; grep 'status=5[0-9][0-9]' "$work/server.log" | head
    status=1
fi
if [[ $status -ne 0 ]]; then echo "fuzz: failed"; exit "$status"; fi
echo "fuzz: no 5xx, every answer matched the document"
