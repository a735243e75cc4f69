"""AWS Signature Version 4, as S3 uses it: the signing shared by s3-server.py and my_s3_test.py."""
import hashlib
import hmac

REGION, SERVICE = "us-east-1", "s3"


def _hmac(key, text):
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def signature(secret, method, path, headers, signed, amz_date):
    """The hex signature of a request: headers maps lower-case names to values, signed lists the names signed."""
    canonical = "\n".join([
        method, path, "",
        "".join(f"{name}:{headers[name].strip()}\n" for name in signed),
        ";".join(signed),
        headers["x-amz-content-sha256"],
    ])
    day = amz_date[:8]
    scope = f"{day}/{REGION}/{SERVICE}/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    key = _hmac(_hmac(_hmac(_hmac(("AWS4" + secret).encode(), day), REGION), SERVICE), "aws4_request")
    return hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
