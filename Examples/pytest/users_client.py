"""The code under test: a tiny client of the users API (tools/demo-api.py), unaware of Kakapo."""

import os

import requests

API = os.environ.get("USERS_API", "http://127.0.0.1:9000")


def user_name(user_id: str) -> str:
    answer = requests.get(f"{API}/users/{user_id}", timeout=10)
    answer.raise_for_status()
    return answer.json()["name"]


def create_user(name: str, email: str) -> dict:
    answer = requests.post(f"{API}/users", json={"name": name, "email": email}, timeout=10)
    answer.raise_for_status()
    return answer.json()
