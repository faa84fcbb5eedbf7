"""Inputs for scripts/bench-http's command rounds: each step's request lines for
scripts/lib/replay.lua, made from the answers the previous step captured.

  bench_commands.py signups N OUT [FIRST]          N sign-ups with fresh nicknames (numbered from FIRST)
  bench_commands.py requests CAPTURED BASE_URL REQUESTER_TOKEN OUT
                                                   a drop token from each signed-up user (fetched
                                                   here), and a mate request to each with it
  bench_commands.py accepts PENDING USERS OUT      each addressee accepts its request
                                                   (PENDING: "request_id to_user" lines)
  bench_commands.py responds PENDING TOKEN OUT     the addressee accepts each walk
                                                   (PENDING: a walk id per line)
  bench_commands.py count CAPTURED STATUS          answers with that status (and EXHAUSTED lines)
Captured files are <prefix>-<thread> files: "STATUS BODY" per line.
"""
import glob
import json
import sys
import time


def captured(prefix, status):
    """Bodies of the answers with `status`, in no particular order."""
    for path in sorted(glob.glob(prefix + "-*")):
        with open(path) as file:
            for line in file:
                code, _, body = line.rstrip("\n").partition(" ")
                if code == str(status):
                    yield json.loads(body)


def write(path, lines):
    with open(path, "w") as file:
        for line in lines:
            file.write(line + "\n")


def main(argv):
    step = argv[1]
    if step == "signups":
        count, out = int(argv[2]), argv[3]
        first = int(argv[4]) if len(argv) > 4 else 0
        # Nicknames are 2 to 8 characters and unique: "b" and the index in base 36.
        def nickname(index):
            digits = ""
            while True:
                index, digit = divmod(index, 36)
                digits = "0123456789abcdefghijklmnopqrstuvwxyz"[digit] + digits
                if index == 0:
                    return "b" + digits

        write(out, ("POST /v1/users - " + json.dumps({
            "nickname": nickname(index), "dog_name": "Bello", "age": 3, "sex": "male", "neutered": True,
            "size": "medium", "keywords": ["friendly"], "profile_image": None}, separators=(",", ":"))
            for index in range(first, first + count)))
    elif step == "requests":
        # The drop tokens are not a command: they are fetched here, 16 at a time, not measured.
        base, requester = argv[3], argv[4]
        sys.path.insert(0, __file__.rsplit("/", 1)[0])
        from api import API
        from concurrent.futures import ThreadPoolExecutor
        api = API(base)
        users = list(captured(argv[2], 201))

        def request_line(user):
            # A stall of this machine's disk can hold every pooled connection for seconds; the
            # server then sheds load (`503 overloaded`), and this preparation backs off and asks again.
            for attempt in range(6):
                status, _, drop = api.call("POST", "/v1/me/drop-tokens", {}, token=user["token"])
                if status != 503:
                    break
                time.sleep(0.5 * (attempt + 1))
            assert status == 201, (status, drop)
            return "POST /v1/mate-requests %s %s" % (requester, json.dumps(
                {"to": user["user_id"], "drop_token": drop["drop_token"]}, separators=(",", ":")))

        with ThreadPoolExecutor(16) as pool:
            write(argv[5], pool.map(request_line, users))
        write(argv[5] + ".users", ("%s %s" % (user["user_id"], user["token"]) for user in users))
    elif step == "accepts":
        # Pending requests of this round's addressees (earlier rounds' are left as they are).
        tokens = dict(line.split() for line in open(argv[3]))
        pending = (line.split() for line in open(argv[2]))
        write(argv[4], ("POST /v1/mate-requests/%s/accept %s {}" % (request, tokens[to])
                        for request, to in pending if to in tokens))
    elif step == "responds":
        write(argv[4], ('POST /v1/walks/%s/response %s {"answer":"accept"}' % (line.strip(), argv[3])
                        for line in open(argv[2]) if line.strip()))
    elif step == "count":
        total = exhausted = 0
        for path in glob.glob(argv[2] + "-*"):
            for line in open(path):
                if line.startswith("EXHAUSTED"):
                    exhausted += 1
                elif line.startswith(argv[3] + " "):
                    total += 1
        print(total, exhausted)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
