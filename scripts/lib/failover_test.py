"""Drives scripts/failover-test against the topology of scripts/cluster.

16 clients (8 pairs of mates, each pair split over the two serve processes) send walks; the
primary is then lost in one of three ways; afterwards every acknowledged walk (201) must be in
the new primary's log, no request may have had a 500, both processes must take writes again
within 15 s of the promotion, the read models must catch up and `sniffmeet verify` must pass.

  variant 1  kill -9 of the primary's machine: its Patroni, its PostgreSQL and every backend
  variant 2  the primary's machine freezes: SIGSTOP to its Patroni and PostgreSQL until a new
             primary is promoted (the leader key expired), then SIGCONT; the old primary must
             come back as a standby
  variant 3  kill -9 of the synchronous standby, then of the primary some seconds later
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from api import API, nickname  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CLUSTER = os.path.join(ROOT, "scripts", "cluster")
BASE = int(os.environ.get("SNIFFMEET_CLUSTER_PORT_BASE", "25400"))
NODES = ["pg1", "pg2", "pg3"]
SERVES = {"serve1": BASE + 31, "serve2": BASE + 32}
RECOVERY_LIMIT = 15.0


def cluster(*args, check=True):
    result = subprocess.run([CLUSTER, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if check and result.returncode != 0:
        raise SystemExit("scripts/cluster %s failed:\n%s" % (" ".join(args), result.stdout))
    return result.stdout


def rest(node, path, timeout=1.0):
    """Status and JSON body of a Patroni REST call, or (None, None) when the node does not answer."""
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (BASE + 10 + int(node[2:]), path), timeout=timeout) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, None
    except Exception:
        return None, None


def leader():
    for node in NODES:
        if rest(node, "/primary")[0] == 200:
            return node
    return None


def members():
    for node in NODES:
        status, body = rest(node, "/cluster")
        if status == 200 and body:
            return body["members"]
    return []


def healthy(synchronous):
    listed = members()
    running = [m for m in listed if m.get("state") in ("running", "streaming")]
    if len(running) != 3:
        return False
    return not synchronous or any(m["role"] == "sync_standby" for m in listed)


def wait(what, predicate, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise SystemExit("timed out after %ds waiting for %s" % (seconds, what))


def psql(node, sql):
    env = {**os.environ}
    url = "host=127.0.0.1 port=%d dbname=sniffmeet user=postgres connect_timeout=3" % (BASE + int(node[2:]))
    result = subprocess.run(["psql", url, "-AtX", "-v", "ON_ERROR_STOP=1", "-c", sql],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if result.returncode != 0:
        raise SystemExit("psql on %s: %s" % (node, result.stderr))
    return result.stdout.split()


def walreceiver(node):
    """Pid of a standby's WAL receiver process."""
    with open(os.path.join(os.environ["SNIFFMEET_CLUSTER_DIR"], node, "data", "postmaster.pid")) as pidfile:
        postmaster = pidfile.readline().strip()
    listing = subprocess.run(["ps", "-o", "pid=,args=", "--ppid", postmaster], stdout=subprocess.PIPE, text=True).stdout
    for line in listing.splitlines():
        if "walreceiver" in line:
            return int(line.split()[0])
    return None


class Load:
    """16 writers; every outcome recorded with the time its request started."""

    def __init__(self, pairs):
        self.pairs = pairs
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.acknowledged = []  # (walk id, serve, started)
        self.finished = {}  # walk id -> when its 201 arrived
        self.statuses = {}
        self.errors = 0  # no HTTP answer at all (connection refused or reset, timeout)
        self.threads = [threading.Thread(target=self.writer, args=(i,), daemon=True) for i in range(16)]

    def writer(self, index):
        a, b = self.pairs[index // 2]
        sender, receiver = (a, b) if index % 2 == 0 else (b, a)
        serve = "serve1" if index % 2 == 0 else "serve2"
        api = API("http://127.0.0.1:%d" % SERVES[serve])
        while not self.stop.is_set():
            started = time.time()
            try:
                status, _, body = api.call("POST", "/v1/walks", {
                    "to": receiver[0], "message": "Walk?", "latitude": 1.0, "longitude": 2.0}, token=sender[1])
            except Exception:
                with self.lock:
                    self.errors += 1
                time.sleep(0.1)
                continue
            with self.lock:
                self.statuses[status] = self.statuses.get(status, 0) + 1
                if status == 201:
                    self.acknowledged.append((body["walk_id"], serve, started))
                    self.finished[body["walk_id"]] = time.time()
            if status >= 500:
                time.sleep(0.1)  # what a client does on 503 (Retry-After is 1 s at most here)

    def start(self):
        for thread in self.threads:
            thread.start()

    def finish(self):
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=30)

    def first_write_after(self, moment):
        with self.lock:
            firsts = {}
            for _, serve, started in self.acknowledged:
                if started >= moment and (serve not in firsts or started < firsts[serve]):
                    firsts[serve] = started
            return firsts


def one_round(args, number, pairs):
    synchronous = not args.asynchronous
    wait("a healthy cluster", lambda: healthy(synchronous), 240)
    old = leader()
    sync = next((m["name"] for m in members() if m["role"] == "sync_standby"), None)
    others = [n for n in NODES if n != old]
    load = Load(pairs)
    load.start()
    time.sleep(args.load_seconds)

    killed, restarted = [], set()
    fault = time.time()
    if args.variant == 1:
        cluster("kill-node", old)
        killed.append(old)
    elif args.variant == 2:
        cluster("freeze-node", old)
    else:
        victim = sync or others[0]
        survivor = next(n for n in others if n != victim)
        cluster("kill-node", victim)
        killed.append(victim)
        head_start_end = time.time() + args.standby_head_start
        while time.time() < head_start_end:
            if args.asynchronous:
                # The control: the surviving standby cut off (its WAL receiver stopped each time
                # it reconnects, as a broken link would) while an asynchronous primary goes on
                # acknowledging. Stopping it (SIGSTOP) would not do: what the primary already
                # sent waits in the socket and arrives afterwards.
                receiver = walreceiver(survivor)
                if receiver:
                    os.kill(receiver, signal.SIGTERM)
            time.sleep(0.2)
        fault = time.time()
        cluster("kill-node", old)
        killed.append(old)
        # The promoted standby is alone: with synchronous_mode_strict it takes no write until
        # a standby is back, so the first victim restarts at once.
        cluster("start-node", victim)
        restarted.add(victim)

    old_role = "-"
    if args.variant == 3:
        # When the primary dies before Patroni has named the surviving standby in the /sync key,
        # the only standby it may promote is the restarted first victim, and that one lacks
        # what the survivor confirmed meanwhile ("not the healthiest node"): Patroni rightly
        # promotes nobody. The cluster then waits for the old primary's machine to come back,
        # as it does here after a minute; the checks below are the same either way.
        try:
            new = wait("a new primary", lambda: (lambda n: n if n and n != old else None)(leader()), 60)
        except SystemExit:
            cluster("start-node", old)
            restarted.add(old)
            new = wait("a primary after the old one's restart", leader, 120)
            old_role = "no standby eligible, none promoted; the old primary restarted and %s leads" % new
    else:
        new = wait("a new primary", lambda: (lambda n: n if n and n != old else None)(leader()), 120)
    promoted = time.time()
    if args.variant == 2:
        cluster("thaw-node", old)
        # Patroni on the old primary finds the leader key gone and demotes its PostgreSQL.
        deadline = time.time() + 60
        while time.time() < deadline:
            listed = members()
            if any(m["name"] == old and m["role"] in ("replica", "sync_standby") and m["state"] in ("running", "streaming")
                   for m in listed):
                old_role = "old primary standby after %.1f s" % (time.time() - promoted)
                break
            time.sleep(0.2)
        else:
            old_role = "old primary NOT a standby 60 s after the thaw (leader now: %s)" % leader()
    for node in killed:
        if node not in restarted:
            cluster("start-node", node)

    # Load goes on until both processes wrote again (or the limit is long past).
    deadline = promoted + RECOVERY_LIMIT + 15
    while time.time() < deadline and len(load.first_write_after(promoted)) < 2:
        time.sleep(0.2)
    time.sleep(1)
    load.finish()
    firsts = load.first_write_after(promoted)
    recovery = {serve: (firsts[serve] - promoted if serve in firsts else None) for serve in SERVES}

    # Checks, on the new primary once the cluster is whole again.
    wait("the cluster whole again", lambda: healthy(synchronous), 240)
    new = leader()
    acknowledged = {walk for walk, _, _ in load.acknowledged}
    logged = set(s[len("walk-"):] for s in psql(new, "SELECT stream_id FROM events WHERE stream_id LIKE 'walk-%' AND stream_version = 1"))
    missing = acknowledged - logged
    caught_up = False
    deadline = time.time() + 30
    while time.time() < deadline:
        in_model = set(psql(new, "SELECT walk_id FROM walks"))
        if (acknowledged - missing) <= in_model:
            caught_up = True
            break
        time.sleep(0.5)
    verify = subprocess.run([args.binary, "verify"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    five_hundreds = sum(n for code, n in load.statuses.items() if code >= 500 and code != 503)
    worst = max((r if r is not None else float("inf")) for r in recovery.values())
    ok = (old_role.startswith("old primary standby") or args.variant != 2) and (not missing and five_hundreds == 0 and worst <= RECOVERY_LIMIT and caught_up and verify.returncode == 0
          and len(acknowledged) > 0)
    row = {
        "round": number, "variant": args.variant, "old": old, "new": new, "acknowledged": len(acknowledged),
        "503": load.statuses.get(503, 0), "500": five_hundreds, "no_answer": load.errors, "missing": len(missing),
        "promotion_s": round(promoted - fault, 1),
        "recover_s": {s: (None if r is None else round(r, 1)) for s, r in recovery.items()},
        "read_models": "caught up" if caught_up else "BEHIND", "verify": verify.returncode, "old_primary": old_role,
        "statuses": dict(sorted(load.statuses.items())), "result": "PASS" if ok else "FAIL",
    }
    if verify.returncode != 0:
        print(verify.stdout[-1500:])
    if missing:
        # When each lost walk was sent and answered, against the fault and the promotion.
        for walk, serve, started in sorted((a for a in load.acknowledged if a[0] in missing), key=lambda a: a[2])[:20]:
            print("  missing %s via %s: sent at fault%+.1f s, 201 at promotion%+.1f s" % (
                walk, serve, started - fault, load.finished[walk] - promoted))
    return row


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--variant", type=int, choices=(1, 2, 3), default=1)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--load-seconds", type=float, default=5)
    parser.add_argument("--standby-head-start", type=float, default=4, help="variant 3: seconds between the two kills")
    parser.add_argument("--asynchronous", action="store_true")
    parser.add_argument("--binary", required=True)
    args = parser.parse_args()

    front = API(os.environ["SNIFFMEET_CLUSTER_HTTP"])
    print("failover test: variant %d, %d round(s), %s replication" % (
        args.variant, args.repeat, "ASYNCHRONOUS" if args.asynchronous else "synchronous (strict)"))
    print("%-5s %-9s %-12s %-5s %-5s %-9s %-7s %-11s %-17s %s" % (
        "round", "primary", "acknowledged", "503s", "500s", "no answer", "missing", "promoted s", "recover s (1/2)", "result"))
    rows = []
    for number in range(1, args.repeat + 1):
        pairs = []
        for _ in range(8):
            a, b = front.sign_up(nickname()), front.sign_up(nickname())
            front.make_mates(a, b)
            pairs.append((a, b))
        row = one_round(args, number, pairs)
        rows.append(row)
        recover = "/".join("-" if r is None else "%.1f" % r for r in row["recover_s"].values())
        print("%-5d %-9s %-12d %-5d %-5d %-9d %-7d %-11.1f %-17s %s  (verify exit %d, read models %s%s)" % (
            number, "%s>%s" % (row["old"], row["new"]), row["acknowledged"], row["503"], row["500"], row["no_answer"],
            row["missing"], row["promotion_s"], recover, row["result"], row["verify"], row["read_models"],
            "" if row["old_primary"] == "-" else ", " + row["old_primary"]), flush=True)
        with open(os.path.join(os.environ["SNIFFMEET_CLUSTER_DIR"], "failover-test.jsonl"), "a") as log:
            log.write(json.dumps(row) + "\n")
    failed = [r for r in rows if r["result"] != "PASS"]
    print("failover test: %d of %d round(s) passed; %d acknowledged, %d missing, %d 500s in all" % (
        len(rows) - len(failed), len(rows), sum(r["acknowledged"] for r in rows), sum(r["missing"] for r in rows),
        sum(r["500"] for r in rows)))
    sys.exit(1 if failed else 0)


main()
