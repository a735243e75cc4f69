# The gRPC service of shapes.proto for StreamingShapeTests (grpcio, insecure: h2c). Usage: shapes_server.py STUBS
# where STUBS holds shapes_pb2.py and shapes_pb2_grpc.py (grpc_tools.protoc). Prints
# `grpc listening on http://127.0.0.1:PORT` once serving.
import sys
from concurrent import futures

import grpc

sys.path.insert(0, sys.argv[1])
import shapes_pb2  # noqa: E402
import shapes_pb2_grpc  # noqa: E402


class Shapes(shapes_pb2_grpc.ShapesServicer):
    def Say(self, request, context):
        return shapes_pb2.Note(text="unary: " + request.text)

    def Repeat(self, request, context):
        for i in range(3):
            yield shapes_pb2.Note(text="%s #%d" % (request.text, i + 1))

    def Collect(self, request_iterator, context):
        return shapes_pb2.Note(text="+".join(note.text for note in request_iterator))

    def Echo(self, request_iterator, context):
        for note in request_iterator:
            yield shapes_pb2.Note(text="echo: " + note.text)


server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
shapes_pb2_grpc.add_ShapesServicer_to_server(Shapes(), server)
port = server.add_insecure_port("127.0.0.1:0")
server.start()
print("grpc listening on http://127.0.0.1:%d" % port, flush=True)
server.wait_for_termination()
