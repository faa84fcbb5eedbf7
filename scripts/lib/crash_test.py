"""Drives scripts/crash-test: load, kill -9, restart, check the log and verify."""
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from api import API, nickname  # noqa: E402

BINARY = ".build/debug/sniffmeet"
PORT = int(os.environ.get("PORT", "18090"))
BASE = "http://127.0.0.1:%d" % PORT


def start(data, log):
    # No budgets: the load below is one client on purpose.
    process = subprocess.Popen([BINARY, "serve", "--data-dir", data, "--port", str(PORT)],
                               stdout=log, stderr=subprocess.STDOUT,
                               env={**os.environ, "SNIFFMEET_RATE_LIMITS": "off"})
    for _ in range(240):
        try:
            with urllib.request.urlopen(BASE + "/readyz", timeout=1) as response:
                if response.status == 200:
                    return process
        except Exception:
            pass
        if process.poll() is not None:
            raise SystemExit("server exited early; see %s" % log.name)
        time.sleep(0.25)
    raise SystemExit("server did not become ready")


def main():
    load_seconds = float(sys.argv[1])
    work = tempfile.mkdtemp(prefix="sniffmeet-crash-")
    os.chmod(work, 0o755)
    data = os.path.join(work, "data")
    log = open(os.path.join(work, "server.log"), "ab")
    server = start(data, log)
    api = API(BASE)
    a, b = api.sign_up(nickname()), api.sign_up(nickname())
    api.make_mates(a, b)

    acknowledged, failures, stop = [], [], threading.Event()
    lock = threading.Lock()

    def writer():
        while not stop.is_set():
            try:
                status, headers, body = api.call("POST", "/v1/walks", {
                    "to": b[0], "message": "Walk?", "latitude": 1.0, "longitude": 2.0}, token=a[1])
                if 200 <= status < 300:
                    with lock:
                        acknowledged.append(body["walk_id"])
                elif status >= 500 and status != 503:
                    with lock:
                        failures.append(status)
            except Exception:
                pass  # the server is gone: nothing was acknowledged

    # Sign-ups and mate requests write a session row and spend a drop token beside their events,
    # in the same group-committed transaction: an acknowledged one must find both after the crash
    # (its token signs in; its request is there).
    signed_up, requested = [], []

    def joiner():
        while not stop.is_set():
            try:
                status, _, body = api.call("POST", "/v1/users", {
                    "nickname": nickname(), "dog_name": "Bello", "age": 3, "sex": "male", "neutered": True,
                    "size": "medium", "keywords": ["friendly"], "profile_image": None})
                if 200 <= status < 300:
                    user = (body["user_id"], body["token"])
                    with lock:
                        signed_up.append(user)
                elif status >= 500 and status != 503:
                    with lock:
                        failures.append(status)
                    continue
                else:
                    continue
                status, _, drop = api.call("POST", "/v1/me/drop-tokens", {}, token=b[1])
                if status != 201:
                    continue
                status, _, request = api.call("POST", "/v1/mate-requests", {"to": b[0], "drop_token": drop["drop_token"]}, token=user[1])
                if 200 <= status < 300:
                    with lock:
                        requested.append((user, request["request_id"]))
                elif status >= 500 and status != 503:
                    with lock:
                        failures.append(status)
            except Exception:
                pass  # the server is gone: nothing was acknowledged

    threads = [threading.Thread(target=writer) for _ in range(12)] + [threading.Thread(target=joiner) for _ in range(4)]
    for thread in threads:
        thread.start()
    time.sleep(load_seconds)
    server.send_signal(signal.SIGKILL)
    server.wait()
    time.sleep(0.5)
    stop.set()
    for thread in threads:
        thread.join()
    print("acknowledged before the kill: %d walks, %d sign-ups, %d mate requests" % (len(acknowledged), len(signed_up), len(requested)))

    server = start(data, log)
    missing = []
    for walk_id in acknowledged:
        status, _, _ = api.call("GET", "/v1/walks/" + walk_id, token=a[1])
        if status != 200:
            # The read model may still be catching up: ask again, waiting for it.
            time.sleep(0.2)
            status, _, _ = api.call("GET", "/v1/walks/" + walk_id, token=a[1])
        if status != 200:
            missing.append(walk_id)
    for user in signed_up:
        # The session row committed with the sign-up: its token signs in.
        status, _, _ = api.call("GET", "/v1/me/sessions", token=user[1])
        if status != 200:
            missing.append("session of " + user[0])
    for user, request_id in requested:
        found = False
        for _ in range(25):
            status, _, page = api.call("GET", "/v1/me/mate-requests?direction=outgoing", token=user[1])
            if status == 200 and any(item.get("request_id") == request_id for item in page.get("items", [])):
                found = True
                break
            time.sleep(0.2)
        if not found:
            missing.append("mate request " + request_id)
    time.sleep(1)
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=60)
    verify = subprocess.run([BINARY, "verify", "--data-dir", data], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(verify.stdout[-2000:])
    ok = not missing and not failures and verify.returncode == 0 and acknowledged and signed_up
    print("crash test: %d walks, %d sign-ups, %d mate requests acknowledged, %d missing after restart %s, %d 5xx, verify exit %d -> %s"
          % (len(acknowledged), len(signed_up), len(requested), len(missing), missing[:5], len(failures), verify.returncode,
             "PASS" if ok else "FAIL"))
    stop_cluster(data)
    sys.exit(0 if ok else 1)


def stop_cluster(data):
    """The killed server left its embedded cluster running (the restarted one reused it)."""
    import glob
    pg_ctl = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))[-1:] or ["pg_ctl"]
    command = [pg_ctl[0], "stop", "-m", "fast", "-D", os.path.abspath(data)]
    if os.geteuid() == 0:
        command = ["runuser", "-u", "postgres", "--"] + command
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/")


main()
