"""scripts/restore-drill: every walk acknowledged before the target time is in the restored log
and readable through the API; none acknowledged after it is in the log.

Usage: drill_check.py BASE_URL STATE.json SUPERUSER_CONNINFO"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from api import API  # noqa: E402

base, path, conninfo = sys.argv[1:4]
api = API(base)
walks = json.load(open(path))["walks"]
result = subprocess.run(["psql", conninfo, "-AtX", "-c",
                         "SELECT stream_id FROM events WHERE stream_id LIKE 'walk-%' AND stream_version = 1"],
                        stdout=subprocess.PIPE, text=True, check=True)
logged = set(line[len("walk-"):] for line in result.stdout.split())
before = [w for w in walks if w["phase"].startswith("before")]
after = [w for w in walks if w["phase"] == "after"]
missing = [w["id"] for w in before if w["id"] not in logged]
present_after = [w["id"] for w in after if w["id"] in logged]
unreadable = []
for walk in before:
    for _ in range(50):  # the projectors may still be catching up after the start
        status, _, _ = api.call("GET", "/v1/walks/" + walk["id"], token=walk["token"])
        if status == 200:
            break
        time.sleep(0.2)
    else:
        unreadable.append(walk["id"])
print("   acknowledged before the target: %d, in the restored log: %d, readable through the API: %d"
      % (len(before), len(before) - len(missing), len(before) - len(unreadable)))
print("   acknowledged after the target:  %d, in the restored log: %d" % (len(after), len(present_after)))
sys.exit(0 if before and after and not missing and not present_after and not unreadable else 1)
