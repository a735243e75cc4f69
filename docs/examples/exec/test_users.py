"""The test suite docs/exec.md runs under `kakapo exec`: it reads the users of the demo API at $KAKAPO_URL."""
import json
import os
import urllib.request


def get(path):
    with urllib.request.urlopen(os.environ["KAKAPO_URL"] + path) as answer:
        return json.load(answer)


def test_first_user():
    assert get("/users/1")["name"] == "Ada Lovelace"


def test_second_user():
    assert get("/users/2")["name"] == "Grace Hopper"
