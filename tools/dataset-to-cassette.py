#!/usr/bin/env python3
"""Converts the peers harness's neutral data set into a Kakapo cassette.

    tools/dataset-to-cassette.py /tmp/peers-data/dataset-10k.json OUT.json

The data set is a JSON array of {"method", "path", "status", "headers": {name: value}, "body": str}.
Bodies are stored as text, which Kakapo replays byte for byte.
"""
import json
import sys


def convert(items):
    interactions = []
    for item in items:
        interactions.append({
            "request": {
                "method": item["method"],
                "url": item["path"],
                "headers": [["Host", "peers.local"]],
            },
            "response": {
                "status": item["status"],
                "headers": [[name, value] for name, value in item.get("headers", {}).items()],
                "body": {"text": item["body"]},
            },
        })
    return {"version": 1, "interactions": interactions}


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: dataset-to-cassette.py DATASET.json OUT.json")
    with open(sys.argv[1], encoding="utf-8") as source:
        items = json.load(source)
    with open(sys.argv[2], "w", encoding="utf-8") as target:
        json.dump(convert(items), target, ensure_ascii=False, indent=1)
        target.write("\n")


if __name__ == "__main__":
    main()
