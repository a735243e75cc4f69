"""A raw HTTP/1.1 client that prints each piece of a chunked answer as it arrives, with the time since the
request was sent: python3 docs/examples/streams/client.py PORT PATH [--events N] [--for SECONDS]

The head is printed as it came, then each chunk with its framing (the last one is `0\\r\\n\\r\\n`), then
`(connection closed)` when the server closes. --events N leaves after N chunks; --for SECONDS stops
reading then (`(nothing more)` when nothing came by then; 10 s by default).
"""
import socket
import sys
import time

args = sys.argv[1:]
port, path = int(args[0]), args[1]
options = dict(zip(args[2::2], args[3::2]))
leave_after = int(options.get("--events", 0))
limit = float(options.get("--for", 10))

sock = socket.create_connection(("127.0.0.1", port))
sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
start = time.monotonic()


def say(what):
    print(f"{(time.monotonic() - start) * 1000:.0f} ms  {what}", flush=True)


buffer, head, chunks = b"", None, 0
while True:
    left = limit - (time.monotonic() - start)
    if left <= 0:
        say("(nothing more)")
        break
    sock.settimeout(left)
    try:
        data = sock.recv(65536)
    except socket.timeout:
        continue
    except ConnectionResetError:
        data = b""
    buffer += data
    while True:  # print every whole unit: the head, then each chunk with its framing
        if head is None:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                break
            head, buffer = buffer[: end + 4], buffer[end + 4 :]
            say(repr(head))
            continue
        line = buffer.find(b"\r\n")
        if line < 0:
            break
        size = int(buffer[:line].split(b";")[0], 16)
        whole = line + 2 + size + 2
        if len(buffer) < whole:
            break
        unit, buffer = buffer[:whole], buffer[whole:]
        say(repr(unit))
        if size:
            chunks += 1
    if leave_after and chunks >= leave_after:
        sock.close()
        say("(the client leaves)")
        break
    if not data:
        if buffer:
            say(repr(buffer))
        say("(connection closed)")
        break
