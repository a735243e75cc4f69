# A grpcio client of demo.proto that abandons a server stream, for AbandonedGRPCStreamTests. Usage:
#   cancel_client.py STUBS HOST:PORT TIMES KEEP [DEADLINE]
# calls StreamHellos(name "ada", times TIMES) with a deadline of DEADLINE seconds (30 unless given), reads KEEP
# replies and cancels the call (HTTP/2 RST_STREAM CANCEL), as a Watch client that is done does. Prints one JSON object: {"replies": [...], "code": CODE}.
import json
import sys

import grpc

sys.path.insert(0, sys.argv[1])
import demo_pb2  # noqa: E402

target, times, keep = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
deadline = float(sys.argv[5]) if len(sys.argv) > 5 else 30
channel = grpc.insecure_channel(target, options=[("grpc.enable_http_proxy", 0)])
rpc = channel.unary_stream(
    "/demo.Greeter/StreamHellos",
    request_serializer=demo_pb2.HelloRequest.SerializeToString,
    response_deserializer=demo_pb2.HelloReply.FromString,
)
responses = rpc(demo_pb2.HelloRequest(name="ada", times=times), timeout=deadline)
replies = []
code = "OK"
try:
    for reply in responses:
        replies.append("%s/%d" % (reply.message, reply.sequence))
        if len(replies) == keep:
            responses.cancel()
except grpc.RpcError as error:
    code = error.code().name
print(json.dumps({"replies": replies, "code": code}), flush=True)
channel.close()
