"""A tiny SniffMeet API client on the standard library, for the operational scripts."""
import json
import urllib.error
import urllib.request
import uuid


class API:
    def __init__(self, base):
        self.base = base.rstrip("/")

    def call(self, method, path, body=None, token=None, headers=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        if token:
            request.add_header("Authorization", "Bearer " + token)
        for key, value in (headers or {}).items():
            request.add_header(key, value)
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                text = response.read()
                return response.status, dict(response.headers), json.loads(text) if text else None
        except urllib.error.HTTPError as error:
            text = error.read()
            return error.code, dict(error.headers), json.loads(text) if text else None

    def sign_up(self, nickname):
        status, _, body = self.call("POST", "/v1/users", {
            "nickname": nickname, "dog_name": "Bello", "age": 3, "sex": "male", "neutered": True,
            "size": "medium", "keywords": ["friendly"], "profile_image": None})
        assert status == 201, (status, body)
        return body["user_id"], body["token"]

    def make_mates(self, a, b):
        """a and b are (user_id, token); returns when they are mates."""
        status, _, drop = self.call("POST", "/v1/me/drop-tokens", {}, token=b[1])
        assert status == 201, (status, drop)
        status, _, request = self.call("POST", "/v1/mate-requests", {"to": b[0], "drop_token": drop["drop_token"]}, token=a[1])
        assert status == 201, (status, request)
        status, _, accepted = self.call("POST", "/v1/mate-requests/%s/accept" % request["request_id"], {}, token=b[1])
        assert status == 200, (status, accepted)


def nickname():
    return "n" + uuid.uuid4().hex[:7]
