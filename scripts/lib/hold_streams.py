"""Holds N idle live streams open against a local server: GET /v1/me/notifications/stream (the
inbox stream) unless STREAM_PATH names another (GET /v1/me/stream, the app's one connection).

Usage: python3 hold_streams.py HOST PORT TOKENS_FILE [STREAM_PATH]
One stream per token line. Prints "open N" once every stream has its 200 header, then holds
them until SIGTERM/SIGINT, reading (and counting) whatever the server sends: heartbeats only,
as long as nobody writes to these users. Exits 1 if a stream is refused or closed early.
"""
import asyncio
import signal
import sys


async def hold(host, port, path, token, opened, received, stop, opening):
    # Opened 50 at a time, as phones come online: a thousand at once would find the server's
    # database gate full (503 overloaded, by design).
    async with opening:
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(("GET %s HTTP/1.1\r\nHost: %s\r\n"
                      "Authorization: Bearer %s\r\nAccept: text/event-stream\r\n\r\n" % (path, host, token)).encode())
        await writer.drain()
        status = await reader.readline()
        if b" 200 " not in status:
            raise RuntimeError("stream refused: %r" % status)
        opened.append(1)
    while not stop.is_set():
        try:
            chunk = await asyncio.wait_for(reader.read(4096), timeout=1)
        except asyncio.TimeoutError:
            continue
        if not chunk:
            if not stop.is_set():
                raise RuntimeError("stream closed early")
            break
        received[0] += len(chunk)
    writer.close()


async def main():
    host, port, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    stream_path = sys.argv[4] if len(sys.argv) > 4 else "/v1/me/notifications/stream"
    tokens = [line.strip() for line in open(path) if line.strip()]
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    opened, received = [], [0]
    opening = asyncio.Semaphore(50)
    tasks = [asyncio.create_task(hold(host, port, stream_path, t, opened, received, stop, opening)) for t in tokens]
    while len(opened) < len(tokens):
        done = [t for t in tasks if t.done() and t.exception()]
        if done:
            print("error %s" % done[0].exception(), flush=True)
            sys.exit(1)
        await asyncio.sleep(0.05)
    print("open %d" % len(opened), flush=True)
    await stop.wait()
    await asyncio.gather(*tasks, return_exceptions=True)
    print("closed %d, %d bytes received" % (len(opened), received[0]), flush=True)


asyncio.run(main())
