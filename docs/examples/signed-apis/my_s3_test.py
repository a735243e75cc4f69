"""A client that signs its requests with AWS SigV4 for the host of $AWS_ENDPOINT_URL (or, under `kakapo exec`,
$KAKAPO_URL), as the AWS SDKs do: it puts an object and reads it back, and prints each answer's status."""
import datetime
import hashlib
import os
import re
import urllib.error
import urllib.parse
import urllib.request

from sigv4 import signature

ENDPOINT = os.environ.get("AWS_ENDPOINT_URL") or os.environ["KAKAPO_URL"]
KEY_ID = os.environ.get("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
SECRET = os.environ.get("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")


def send(method, path, body=b""):
    amz_date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    headers = {"host": urllib.parse.urlsplit(ENDPOINT).netloc,
               "x-amz-content-sha256": hashlib.sha256(body).hexdigest(), "x-amz-date": amz_date}
    names = sorted(headers)
    credential = f"{KEY_ID}/{amz_date[:8]}/us-east-1/s3/aws4_request"
    headers["authorization"] = (f"AWS4-HMAC-SHA256 Credential={credential}, SignedHeaders={';'.join(names)}, "
                                f"Signature={signature(SECRET, method, path, headers, names, amz_date)}")
    request = urllib.request.Request(ENDPOINT + path, data=body if method == "PUT" else None, method=method,
                                     headers={k: v for k, v in headers.items() if k != "host"})
    try:
        with urllib.request.urlopen(request) as answer:
            status, text = answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        status, text = error.code, error.read().decode()
    code = re.search(r"<Code>(\w+)</Code>", text)
    print(f"{method} {path}: {status} {code.group(1) if code else text}".rstrip())


send("PUT", "/bucket/key", b"hello")
send("GET", "/bucket/key")
