#!/usr/bin/env python3
"""Writes KakapoProtobuf's test fixtures: test.desc (the descriptor set of test.proto and legacy.proto, with
imports), test-no-imports.desc (test.proto alone) and goldens.json (messages as bytes and as proto3 JSON),
with Python protobuf as the oracle: SerializeToString(deterministic=True) for the bytes, json_format.MessageToDict
for the JSON (keys sorted, so the file is the same from run to run).

Run once after changing a .proto or a case, and commit what it writes:
    .build/python-venv/bin/pip install -q grpcio-tools==1.85.1
    .build/python-venv/bin/python tools/protobuf-goldens.py
"""
import base64
import importlib
import json
import math
import os
import subprocess
import sys
import tempfile

from google.protobuf import json_format

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "Tests", "KakapoProtobufTests", "Fixtures")


def compile_protos(out):
    import grpc_tools
    include = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    command = [sys.executable, "-m", "grpc_tools.protoc", "-I" + FIXTURES, "-I" + include,
               "--include_imports", "--descriptor_set_out=" + os.path.join(FIXTURES, "test.desc"),
               "--python_out=" + out, "test.proto", "legacy.proto"]
    subprocess.run(command, check=True)
    # The same files without their imports, as a plain --descriptor_set_out writes them.
    bare = [sys.executable, "-m", "grpc_tools.protoc", "-I" + FIXTURES, "-I" + include,
            "--descriptor_set_out=" + os.path.join(FIXTURES, "test-no-imports.desc"), "test.proto"]
    subprocess.run(bare, check=True)
    sys.path.insert(0, out)
    return importlib.import_module("test_pb2"), importlib.import_module("legacy_pb2")


def cases(t, legacy):
    from google.protobuf import any_pb2, duration_pb2, struct_pb2, timestamp_pb2, wrappers_pb2
    yield "empty", t.Everything()
    yield "scalars at their extremes", t.Everything(scalars=t.Scalars(
        a_double=-1.5e300, a_float=3.25, an_int64=-(2**63), a_uint64=2**64 - 1, an_int32=-(2**31),
        a_fixed64=2**64 - 1, a_fixed32=2**32 - 1, a_bool=True, a_string="héllo, 世界 🦜", some_bytes=bytes(range(256)),
        a_uint32=2**32 - 1, a_color=t.BLUE, an_sfixed32=-(2**31), an_sfixed64=-(2**63), a_sint32=-(2**31),
        a_sint64=-(2**63)))
    yield "small scalars", t.Scalars(a_double=0.1, a_float=0.1, an_int64=1, a_uint64=1, an_int32=-1, a_sint32=1,
                                     a_sint64=-1, a_uint32=1, a_string="\u0000\"\\\n", some_bytes=b"\xff")
    yield "special floats", t.Scalars(a_double=float("nan"), a_float=float("inf"))
    yield "negative infinity", t.Scalars(a_double=float("-inf"), a_float=-1e-45)
    yield "an unknown enum number", t.Scalars(a_color=7)
    everything = t.Everything(
        inner=t.Everything.Inner(label="in", weight=3, mood=t.Everything.Inner.HAPPY),
        packed_ints=[0, 1, -1, 300, 2**31 - 1], packed_sints=[0, -1, 1, -(2**63)], doubles=[1.0, -2.5, 1e-300],
        names=["a", "", "ç"], blobs=[b"", b"\x00\x01"], inners=[t.Everything.Inner(), t.Everything.Inner(label="x")],
        colors=[t.RED, t.BLUE, 9], counts={"a": 1, "b": 0}, by_id={-5: "minus five", 2**62: "big"},
        by_flag={True: t.Everything.Inner(weight=1), False: t.Everything.Inner()},
        color_by_number={0: t.GREEN, 4294967295: t.COLOR_UNSPECIFIED}, blob_by_key={-2: b"ab", 3: b""},
        choice_inner=t.Everything.Inner(label="chosen"), maybe_count=0, maybe_name="",
        child=t.Everything(child=t.Everything(field_with_json_name=5)), field_with_json_name=-9, mood=t.Everything.Inner.HAPPY,
        snake_case_field_2x="s", big_number_field=1)
    yield "everything", everything
    yield "a oneof at its default", t.Everything(choice_number=0)
    yield "a oneof enum", t.Everything(choice_color=t.COLOR_UNSPECIFIED)
    yield "a oneof string", t.Everything(choice_text="text")
    when = timestamp_pb2.Timestamp(seconds=1700000000, nanos=123000000)
    structure = struct_pb2.Struct()
    structure.update({"name": "kakapo", "count": 3, "ok": True, "none": None, "list": [1, "two", {"x": []}],
                      "nested": {"deep": {"deeper": 1.5}}})
    value = struct_pb2.Value()
    value.list_value.extend([1, None, "s"])
    listing = struct_pb2.ListValue()
    listing.extend([{"a": 1}, [], False])
    packed = any_pb2.Any()
    packed.Pack(t.HelloRequest(name="inside", count=2))
    yield "well-known types", t.WellKnown(
        when=when, how_long=duration_pb2.Duration(seconds=-3, nanos=-500000000),
        double_value=wrappers_pb2.DoubleValue(value=0), float_value=wrappers_pb2.FloatValue(value=1.5),
        int64_value=wrappers_pb2.Int64Value(value=-(2**63)), uint64_value=wrappers_pb2.UInt64Value(value=2**64 - 1),
        int32_value=wrappers_pb2.Int32Value(value=0), uint32_value=wrappers_pb2.UInt32Value(value=7),
        bool_value=wrappers_pb2.BoolValue(value=False), string_value=wrappers_pb2.StringValue(value=""),
        bytes_value=wrappers_pb2.BytesValue(value=b"\x01\x02"), nothing={}, document=structure,
        any_json=value, list=listing, packed=packed, mask={"paths": ["a.b_c", "d"]},
        times=[timestamp_pb2.Timestamp(seconds=0), timestamp_pb2.Timestamp(seconds=-62135596800),
               timestamp_pb2.Timestamp(seconds=253402300799, nanos=999999999),
               timestamp_pb2.Timestamp(seconds=1, nanos=1000)],
        values={"n": struct_pb2.Value(number_value=2), "s": struct_pb2.Value(string_value="x"),
                "z": struct_pb2.Value(null_value=0)})
    packed_duration = any_pb2.Any()
    packed_duration.Pack(duration_pb2.Duration(seconds=1, nanos=10))
    yield "an Any holding a well-known type", t.WellKnown(packed=packed_duration,
                                                          how_long=duration_pb2.Duration(nanos=1))
    yield "a null Value", t.WellKnown(any_json=struct_pb2.Value(null_value=0), how_long=duration_pb2.Duration())
    yield "hello", t.HelloRequest(name="world", count=3)
    old = legacy.Old(id="x", number=0, packed_numbers=[1, 2], loose_numbers=[3, 4], kind=legacy.Old.SECOND)
    old.extra.note = "grouped"
    yield "proto2 with a group", old
    yield "proto2 with defaults unset", legacy.Old(id="")


def has_unordered_map(message):
    """True when a map with two or more entries is anywhere in the message: Python writes map entries in
    an order of its own, so bytes made from the JSON may order them differently (and differ only there)."""
    for field, value in message.ListFields():
        if field.message_type is None:
            continue
        if field.message_type.GetOptions().map_entry:
            if len(value) > 1:
                return True
            values = value.values() if field.message_type.fields_by_name["value"].message_type else []
        elif field.is_repeated:
            values = value
        else:
            values = [value]
        if any(has_unordered_map(item) for item in values):
            return True
    return False


def main():
    with tempfile.TemporaryDirectory() as out:
        t, legacy = compile_protos(out)
        goldens = []
        for name, message in cases(t, legacy):
            goldens.append({
                "name": name,
                "type": message.DESCRIPTOR.full_name,
                "base64": base64.b64encode(message.SerializeToString(deterministic=True)).decode(),
                "json": json_format.MessageToDict(message),
                "sameOrder": not has_unordered_map(message),
            })
    with open(os.path.join(FIXTURES, "goldens.json"), "w") as file:
        # Keys sorted (and bytes deterministic) so that a run writes the same file as the last.
        json.dump(goldens, file, indent=1, ensure_ascii=False, sort_keys=True)
        file.write("\n")
    print(f"wrote {len(goldens)} goldens and test.desc to {FIXTURES}")


if __name__ == "__main__":
    main()
