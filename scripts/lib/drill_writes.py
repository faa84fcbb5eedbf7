"""scripts/restore-drill: send walks through the API and record each acknowledged one.

Usage: drill_writes.py BASE_URL PHASE STATE.json  (the state keeps the users between calls)"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from api import API, nickname  # noqa: E402

base, phase, path = sys.argv[1:4]
api = API(base)
state = json.load(open(path)) if os.path.exists(path) else {"pairs": [], "walks": []}
if not state["pairs"]:
    for _ in range(2):
        a, b = api.sign_up(nickname()), api.sign_up(nickname())
        api.make_mates(a, b)
        state["pairs"].append([list(a), list(b)])
count = 0
for _ in range(10):
    for a, b in state["pairs"]:
        for sender, receiver in ((a, b), (b, a)):
            status, _, body = api.call("POST", "/v1/walks", {
                "to": receiver[0], "message": "Walk?", "latitude": 1.0, "longitude": 2.0}, token=sender[1])
            if status != 201:
                raise SystemExit("walk not acknowledged: %s %s" % (status, body))
            state["walks"].append({"id": body["walk_id"], "phase": phase, "token": sender[1]})
            count += 1
json.dump(state, open(path, "w"))
print("   %d walks acknowledged (%s)" % (count, phase))
