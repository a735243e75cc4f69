# The gRPC service of demo.proto for GRPCEndToEndTests (grpcio, insecure: h2c). Usage: demo_server.py STUBS
# where STUBS holds demo_pb2.py and demo_pb2_grpc.py (grpc_tools.protoc). Prints
# `grpc listening on http://127.0.0.1:PORT` once serving.
import sys
import time
from concurrent import futures

import grpc

sys.path.insert(0, sys.argv[1])
import demo_pb2  # noqa: E402
import demo_pb2_grpc  # noqa: E402


class Greeter(demo_pb2_grpc.GreeterServicer):
    def SayHello(self, request, context):
        context.set_trailing_metadata((("x-served-by", "python"),))
        return demo_pb2.HelloReply(message="hello " + request.name, sequence=1, tags=["unary"])

    def StreamHellos(self, request, context):
        context.set_trailing_metadata((("x-stream-count", str(request.times)),))
        for i in range(request.times):
            if i:
                time.sleep(0.05)
            yield demo_pb2.HelloReply(message="hello %s #%d" % (request.name, i + 1), sequence=i + 1)

    def Fail(self, request, context):
        context.set_trailing_metadata((("x-reason", "test"),))
        if request.name.startswith("missing"):
            context.abort(grpc.StatusCode.NOT_FOUND, "no user named %s (\u00e9)" % request.name)
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, "bad name: " + request.name)


server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
demo_pb2_grpc.add_GreeterServicer_to_server(Greeter(), server)
port = server.add_insecure_port("127.0.0.1:0")
server.start()
print("grpc listening on http://127.0.0.1:%d" % port, flush=True)
server.wait_for_termination()
