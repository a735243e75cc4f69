# A grpcio client of shapes.proto for StreamingShapeTests. Usage: shapes_client.py STUBS HOST:PORT CALL TEXT...
# where CALL is Say, Repeat (TEXT is one note), Collect (the notes sent back to back, then the request ends),
# Echo (the notes sent back to back, then the request ends) or EchoOpen (one note sent, the request kept open
# while it waits for the echo, as etcd's watch does). Each call has a 20 s deadline. Prints one JSON object:
# {"code", "details", "replies", "seconds"}.
import json
import queue
import sys
import time

import grpc

sys.path.insert(0, sys.argv[1])
import shapes_pb2  # noqa: E402

target, call, texts = sys.argv[2], sys.argv[3], sys.argv[4:]
channel = grpc.insecure_channel(target, options=[("grpc.enable_http_proxy", 0)])
path = "/shapes.Shapes/" + ("Echo" if call == "EchoOpen" else call)
serialize, deserialize = shapes_pb2.Note.SerializeToString, shapes_pb2.Note.FromString
notes = [shapes_pb2.Note(text=text) for text in texts]
replies = []
started = time.monotonic()
try:
    if call == "Say":
        reply, outcome = channel.unary_unary(path, serialize, deserialize).with_call(notes[0], timeout=20)
        replies.append(reply.text)
    elif call == "Repeat":
        outcome = channel.unary_stream(path, serialize, deserialize)(notes[0], timeout=20)
        replies += [reply.text for reply in outcome]
    elif call == "Collect":
        reply, outcome = channel.stream_unary(path, serialize, deserialize).with_call(iter(notes), timeout=20)
        replies.append(reply.text)
    elif call == "Echo":
        outcome = channel.stream_stream(path, serialize, deserialize)(iter(notes), timeout=20)
        replies += [reply.text for reply in outcome]
    else:
        # The request stays open until the first echo arrives (or the call ends), like a watch.
        outgoing = queue.Queue()
        outgoing.put(notes[0])

        def requests():
            while True:
                note = outgoing.get()
                if note is None:
                    return
                yield note

        outcome = channel.stream_stream(path, serialize, deserialize)(requests(), timeout=20)
        try:
            for reply in outcome:
                replies.append(reply.text)
                break
        finally:
            outgoing.put(None)
        if replies:
            outcome.cancel()
except grpc.RpcError as error:
    outcome = error
print(json.dumps({
    "code": outcome.code().name, "details": outcome.details() or "", "replies": replies,
    "seconds": round(time.monotonic() - started, 3),
}), flush=True)
