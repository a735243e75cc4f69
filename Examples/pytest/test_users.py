"""Each test runs in its own Kakapo session: its cassette is cassettes/test_users/<test>.json."""

import subprocess

import httpx
import pytest

from users_client import API, create_user, user_name


@pytest.mark.kakapo
@pytest.mark.parametrize("user_id, name", [("1", "Ada Lovelace"), ("2", "Grace Hopper")])
def test_user_name(user_id, name):
    assert user_name(user_id) == name


@pytest.mark.kakapo
def test_create_user():
    assert create_user("Kea", "kea@example.com") == {"id": "3", "name": "Kea", "email": "kea@example.com"}


def test_list_with_httpx(kakapo):
    users = httpx.get(f"{API}/users", timeout=10).json()
    assert [u["name"] for u in users] == ["Ada Lovelace", "Grace Hopper"]
    assert kakapo.count("GET", "/users") == 1


@pytest.mark.kakapo(cassette="shared/missing-user.json")
def test_missing_user_from_a_subprocess():
    # curl is another process: it goes through Kakapo too, through HTTP_PROXY.
    out = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", f"{API}/users/99"], capture_output=True)
    assert out.stdout == b"404"
