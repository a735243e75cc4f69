# A grpcio client of demo.proto for GRPCEndToEndTests and docs/grpc.md. Usage:
#   demo_client.py [--text] STUBS HOST:PORT CALLS
# where CALLS is a JSON list of {"method": "SayHello"|"StreamHellos"|"Fail", "name": ..., "times": N} or, to send
# bytes as they are, {"method": ..., "raw": HEX}. Prints one JSON object: {"calls": [{"code", "details",
# "replies", "trailing", "arrivals"}]}, arrivals being each reply's milliseconds after the call started; with
# --text, a few lines per call for people.
import json
import sys
import time

import grpc

sys.path.insert(0, sys.argv[2] if sys.argv[1] == "--text" else sys.argv[1])
import demo_pb2  # noqa: E402

arguments = sys.argv[1:]
text = arguments[0] == "--text"
if text:
    arguments = arguments[1:]
target, calls = arguments[1], json.loads(arguments[2])
channel = grpc.insecure_channel(target, options=[("grpc.enable_http_proxy", 0)])
results = []
for call in calls:
    method = "/demo.Greeter/" + call["method"]
    streaming = call["method"] == "StreamHellos"
    if "raw" in call:
        request, serializer = bytes.fromhex(call["raw"]), (lambda b: b)
    else:
        request = demo_pb2.HelloRequest(name=call.get("name", ""), times=call.get("times", 0))
        serializer = demo_pb2.HelloRequest.SerializeToString
    deserializer = demo_pb2.HelloReply.FromString
    result = {"replies": [], "arrivals": []}
    started = time.monotonic()

    def note(reply):
        result["replies"].append({"message": reply.message, "sequence": reply.sequence, "tags": list(reply.tags)})
        result["arrivals"].append(round((time.monotonic() - started) * 1000, 1))

    try:
        if streaming:
            rpc = channel.unary_stream(method, request_serializer=serializer, response_deserializer=deserializer)
            responses = rpc(request, timeout=20)
            for reply in responses:
                note(reply)
            outcome = responses
        else:
            rpc = channel.unary_unary(method, request_serializer=serializer, response_deserializer=deserializer)
            reply, outcome = rpc.with_call(request, timeout=20)
            note(reply)
    except grpc.RpcError as error:
        outcome = error
    result["code"] = outcome.code().name
    result["details"] = outcome.details()
    result["trailing"] = sorted([k, v] for k, v in (outcome.trailing_metadata() or ()) if not k.startswith("grpc-"))
    results.append(result)
    if text:
        print("%s(%s) -> %s %s" % (call["method"], call.get("name", call.get("raw")), result["code"], result["details"]))
        for reply, arrival in zip(result["replies"], result["arrivals"]):
            print("  %6.1f ms  %s" % (arrival, json.dumps(reply)))
        for key, value in result["trailing"]:
            print("  trailing %s: %s" % (key, value))
if not text:
    print(json.dumps({"calls": results}), flush=True)
