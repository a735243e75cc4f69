#!/usr/bin/env python3
"""Turns the peers harness's one-recording data set (S1) into a Kakapo routes file whose one templated
route answers the same bytes: `GET /users/:id` with the body as a text template in which the id comes
from the path ({{params.id}}), so every answer is rendered per request rather than replayed.

Usage: tools/dataset-to-routes.py DATASET.json OUT.json
"""
import json
import re
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    entries = json.load(open(sys.argv[1]))
    if len(entries) != 1:
        sys.exit("dataset-to-routes.py: only the one-recording data set (S1) has a route shape")
    entry = entries[0]
    match = re.fullmatch(r"/(\w+)/(\d+)", entry["path"])
    if not match or ('"id":%s,' % match.group(2)) not in entry["body"]:
        sys.exit("dataset-to-routes.py: expected GET /NAME/ID with the id in the body")
    collection, ident = match.groups()
    template = entry["body"].replace('"id":%s,' % ident, '"id":{{params.id}},', 1)
    route = {
        "method": entry["method"],
        "path": "/%s/:id" % collection,
        "response": {"status": entry["status"], "headers": entry["headers"], "text": template},
    }
    with open(sys.argv[2], "w") as out:
        json.dump({"routes": [route]}, out, indent=2)
        out.write("\n")


main()
