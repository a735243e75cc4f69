#!/usr/bin/env python3
"""Converts the peers harness's neutral data set into a Kakapo cassette.

    tools/dataset-to-cassette.py [--dated] /tmp/peers-data/dataset-10k.json OUT.json

The data set is a JSON array of {"method", "path", "status", "headers": {name: value}, "body": str}.
Bodies are stored as text, which Kakapo replays byte for byte. With --dated every answer also has the
`Date` and `Expires` a real server sends, which a replay moves to its own clock (design 5.6): the cost of
that is measured with `DATED=1 tools/bench-ab`.
"""
import json
import sys


DATE = "Sun, 01 Nov 2026 10:00:00 GMT"
EXPIRES = "Sun, 01 Nov 2026 11:00:00 GMT"


def convert(items, dated=False):
    interactions = []
    for item in items:
        headers = [[name, value] for name, value in item.get("headers", {}).items()]
        if dated:
            headers = [["Date", DATE]] + headers + [["Expires", EXPIRES]]
        interactions.append({
            "request": {
                "method": item["method"],
                "url": item["path"],
                "headers": [["Host", "peers.local"]],
            },
            "response": {
                "status": item["status"],
                "headers": headers,
                "body": {"text": item["body"]},
            },
        })
    return {"version": 1, "interactions": interactions}


def main():
    arguments = sys.argv[1:]
    dated = "--dated" in arguments
    arguments = [argument for argument in arguments if argument != "--dated"]
    if len(arguments) != 2:
        sys.exit("usage: dataset-to-cassette.py [--dated] DATASET.json OUT.json")
    with open(arguments[0], encoding="utf-8") as source:
        items = json.load(source)
    with open(arguments[1], "w", encoding="utf-8") as target:
        json.dump(convert(items, dated), target, ensure_ascii=False, indent=1)
        target.write("\n")


if __name__ == "__main__":
    main()
