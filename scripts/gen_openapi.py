#!/usr/bin/env python3
"""Writes Sources/Gateway/openapi.json: the OpenAPI 3.1 description of shared/API.md.

Hand-kept in step with API.md; GatewayTests.OpenAPIDriftTests fails when the router and this
document disagree on the set of (method, path). Run: python3 scripts/gen_openapi.py
"""
import json, os

def ref(name): return {"$ref": f"#/components/schemas/{name}"}
def err(desc): return {"description": desc, "content": {"application/json": {"schema": ref("Error")}}}
def ok(desc, schema, headers=None):
    r = {"description": desc, "content": {"application/json": {"schema": schema}}}
    if headers: r["headers"] = headers
    return r
LOGPOS = {"Log-Position": {"description": "Opaque log position of the command's last event; send it as Min-Log-Position.",
                           "schema": {"type": "string"}}}
def param(name, where, schema, desc, required=False):
    return {"name": name, "in": where, "required": required, "description": desc, "schema": schema}
UUID = {"type": "string", "format": "uuid"}
TIME = {"type": "string", "format": "date-time"}
IDEM = param("Idempotency-Key", "header", {"type": "string", "minLength": 1, "maxLength": 200, "pattern": "^[\\x21-\\x7e]+$"},
             "Same key, same user, same body: the first answer again, nothing written.")
POSITION = {"type": "string", "pattern": "^[0-9]{1,20}\\.[0-9]{1,19}$"}
MINPOS = param("Min-Log-Position", "header", POSITION, "Answer only once the read models include this position (waits up to 3 s).")
LIMIT = param("limit", "query", {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}, "Page size.")
CURSOR = param("cursor", "query", {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,200}$"}, "Opaque cursor from next_cursor.")
def idparam(name="id"): return param(name, "path", UUID, "Id.", required=True)

COMMON = {"401": err("Missing or wrong bearer token (unauthorized)."),
          "503": err("Database down (unavailable), overloaded, request_timeout, or not_caught_up.")}
def resp(extra): return {**extra, **COMMON}
def body(schema):
    return {"required": True, "content": {"application/json": {"schema": schema}}}
POST_ERRORS = {"400": err("invalid_json or validation_failed (with field)."),
               "413": err("Body over 16 KiB (body_too_large)."),
               "422": err("Idempotency-Key reused with a different body (idempotency_key_reused).")}

keywords = {"type": "array", "items": {"type": "string", "enum": ["energetic", "smart", "friendly", "shy", "independent"]},
            "minItems": 1, "maxItems": 2, "uniqueItems": True}
profile_fields = {
    "nickname": {"type": "string", "minLength": 2, "maxLength": 8},
    "dog_name": {"type": "string", "minLength": 1, "maxLength": 15},
    "age": {"type": "integer", "minimum": 0, "maximum": 99},
    "sex": {"type": "string", "enum": ["male", "female"]},
    "neutered": {"type": "boolean"},
    "size": {"type": "string", "enum": ["small", "medium", "large"]},
    "keywords": keywords,
    "profile_image": {"type": ["string", "null"], "minLength": 1, "maxLength": 200},
}
card_props = {"user_id": UUID, **profile_fields}
schemas = {
    "Error": {"type": "object", "required": ["error"], "properties": {"error": {
        "type": "object", "required": ["code", "message"],
        "properties": {"code": {"type": "string"}, "message": {"type": "string"}, "field": {"type": "string"}}}}},
    "Card": {"type": "object", "required": list(card_props), "properties": card_props},
    "Profile": {"type": "object", "required": list(card_props) + ["created_at"], "properties": {**card_props, "created_at": TIME}},
    "SignUp": {"type": "object", "required": [k for k in profile_fields if k != "profile_image"], "properties": profile_fields},
    "SignedUp": {"type": "object", "required": ["user_id", "token", "profile"],
                 "properties": {"user_id": UUID, "token": {"type": "string"}, "profile": ref("Profile")}},
    "ProfileChanges": {"type": "object", "properties": {k: v for k, v in profile_fields.items() if k != "sex"}},
    "DeviceToken": {"type": "object", "required": ["device_token"],
                    "properties": {"device_token": {"type": "string", "pattern": "^[0-9a-fA-F]{1,200}$"}}},
    "DropToken": {"type": "object", "required": ["drop_token", "expires_at"],
                  "properties": {"drop_token": {"type": "string"}, "expires_at": TIME}},
    "NewMateRequest": {"type": "object", "required": ["to", "drop_token"],
                       "properties": {"to": UUID, "drop_token": {"type": "string", "minLength": 1, "maxLength": 200}}},
    "MateRequest": {"type": "object", "required": ["request_id", "from", "to", "status", "created_at", "updated_at"],
                    "properties": {"request_id": UUID, "from": ref("Card"), "to": ref("Card"),
                                   "status": {"type": "string", "enum": ["pending", "accepted", "declined", "cancelled"]},
                                   "created_at": TIME, "updated_at": TIME}},
    "Mate": {"type": "object", "required": list(card_props) + ["mates_since"], "properties": {**card_props, "mates_since": TIME}},
    "NewWalk": {"type": "object", "required": ["to", "message", "latitude", "longitude"],
                "properties": {"to": UUID, "message": {"type": "string", "minLength": 1, "maxLength": 100},
                               "latitude": {"type": "number", "minimum": -90, "maximum": 90},
                               "longitude": {"type": "number", "minimum": -180, "maximum": 180},
                               "place_name": {"type": ["string", "null"], "maxLength": 100}}},
    "WalkAnswer": {"type": "object", "required": ["answer"], "properties": {"answer": {"type": "string", "enum": ["accept", "decline"]}}},
    "Walk": {"type": "object",
             "required": ["walk_id", "from", "to", "message", "latitude", "longitude", "place_name", "status", "created_at", "expires_at", "answered_at"],
             "properties": {"walk_id": UUID, "from": ref("Card"), "to": ref("Card"), "message": {"type": "string"},
                            "latitude": {"type": "number"}, "longitude": {"type": "number"}, "place_name": {"type": ["string", "null"]},
                            "status": {"type": "string", "enum": ["pending", "accepted", "declined", "expired", "cancelled"]},
                            "created_at": TIME, "expires_at": TIME, "answered_at": {"type": ["string", "null"], "format": "date-time"}}},
    "Notification": {"type": "object", "required": ["notification_id", "category", "from", "created_at"],
                     "properties": {"notification_id": UUID,
                                    "category": {"type": "string", "enum": ["mate_requested", "mate_accepted", "walk_requested",
                                                                            "walk_accepted", "walk_declined", "walk_expired"]},
                                    "from": {"type": "object", "required": ["user_id", "dog_name"],
                                             "properties": {"user_id": UUID, "dog_name": {"type": "string"}}},
                                    "request_id": {"type": ["string", "null"], "format": "uuid"},
                                    "walk_id": {"type": ["string", "null"], "format": "uuid"},
                                    "message": {"type": ["string", "null"]}, "latitude": {"type": ["number", "null"]},
                                    "longitude": {"type": ["number", "null"]}, "place_name": {"type": ["string", "null"]},
                                    "created_at": TIME}},
    "Status": {"type": "object", "required": ["status"], "properties": {"status": {"type": "string"}}},
    "Projections": {"type": "object", "required": ["head", "projectors"], "properties": {
        "head": {"type": "string"},
        "projectors": {"type": "array", "items": {"type": "object",
                       "required": ["name", "checkpoint", "lag_events", "lag_seconds", "state", "updated_at"],
                       "properties": {"name": {"type": "string"}, "checkpoint": {"type": "string"},
                                      "lag_events": {"type": "integer"}, "lag_seconds": {"type": "number"},
                                      "state": {"type": "string", "enum": ["caught_up", "catching_up", "not_started"]},
                                      "updated_at": {"type": ["string", "null"], "format": "date-time"}}}}}},
}
def listof(name):
    return {"type": "object", "required": ["items", "next_cursor"],
            "properties": {"items": {"type": "array", "items": ref(name)}, "next_cursor": {"type": ["string", "null"]}}}

DIRECTION = param("direction", "query", {"type": "string", "enum": ["incoming", "outgoing"]}, "Only incoming or outgoing.")
PUBLIC = []
paths = {
    "/v1/users": {"post": {"operationId": "signUp", "summary": "Sign up anonymously with the dog profile.", "security": PUBLIC,
        "parameters": [IDEM], "requestBody": body(ref("SignUp")),
        "responses": resp({"201": ok("Registered; keep the token.", ref("SignedUp"), LOGPOS), **POST_ERRORS,
                           "409": err("nickname_taken.")})}},
    "/v1/me": {
        "get": {"operationId": "getMe", "summary": "My profile.", "parameters": [MINPOS],
                "responses": resp({"200": ok("My profile.", ref("Profile")), "400": err("Bad Min-Log-Position."),
                                   "404": err("Profile not projected yet (not_found).")})},
        "patch": {"operationId": "updateMe", "summary": "Change parts of my profile.", "parameters": [],
                  "requestBody": body(ref("ProfileChanges")),
                  "responses": resp({"200": ok("The changed profile.", ref("Profile"), LOGPOS),
                                     **{k: v for k, v in POST_ERRORS.items() if k != "422"}, "409": err("nickname_taken.")})}},
    "/v1/me/device-token": {"put": {"operationId": "setDeviceToken", "summary": "Store my push token.",
        "requestBody": body(ref("DeviceToken")),
        "responses": resp({"204": {"description": "Stored.", "headers": LOGPOS},
                           **{k: v for k, v in POST_ERRORS.items() if k != "422"}})}},
    "/v1/me/drop-tokens": {"post": {"operationId": "newDropToken", "summary": "A fresh drop token for my profile card.",
        "parameters": [IDEM], "responses": resp({"201": ok("Valid 5 minutes, single use.", ref("DropToken")),
                                                 **POST_ERRORS})}},
    "/v1/users/{id}": {"get": {"operationId": "getCard", "summary": "The dog card of someone I am connected to.",
        "parameters": [idparam(), MINPOS],
        "responses": resp({"200": ok("The card.", ref("Card")), "400": err("Bad Min-Log-Position."),
                           "404": err("Unknown, or not connected to me (not_found).")})}},
    "/v1/mate-requests": {"post": {"operationId": "requestMate", "summary": "RequestMate with the drop token `to` handed over.",
        "parameters": [IDEM], "requestBody": body(ref("NewMateRequest")),
        "responses": resp({"201": ok("Pending request.", ref("MateRequest"), LOGPOS),
                           "200": ok("Accepted: `to` had already asked me.", ref("MateRequest"), LOGPOS),
                           **POST_ERRORS, "403": err("invalid_drop_token."), "404": err("No such user (not_found)."),
                           "409": err("already_mates."), "410": err("drop_token_expired.")})}},
    "/v1/mate-requests/{id}/accept": {"post": {"operationId": "acceptMate", "summary": "AcceptMate, by the addressee.",
        "parameters": [idparam(), IDEM],
        "responses": resp({"200": ok("Accepted.", ref("MateRequest"), LOGPOS), **POST_ERRORS,
                           "403": err("not_addressee."), "404": err("No such request (not_found)."), "409": err("not_pending.")})}},
    "/v1/mate-requests/{id}/decline": {"post": {"operationId": "declineMate", "summary": "Decline, by the addressee.",
        "parameters": [idparam(), IDEM],
        "responses": resp({"200": ok("Declined.", ref("MateRequest"), LOGPOS), **POST_ERRORS,
                           "403": err("not_addressee."), "404": err("No such request (not_found)."), "409": err("not_pending.")})}},
    "/v1/mate-requests/{id}": {"delete": {"operationId": "cancelMateRequest", "summary": "Cancel, by the requester, while pending.",
        "parameters": [idparam()],
        "responses": resp({"200": ok("Cancelled.", ref("MateRequest"), LOGPOS), "403": err("not_requester."),
                           "404": err("No such request (not_found)."), "409": err("not_pending.")})}},
    "/v1/me/mate-requests": {"get": {"operationId": "listMateRequests", "summary": "My mate requests, newest first.",
        "parameters": [DIRECTION, param("status", "query", {"type": "string", "enum": ["pending", "accepted", "declined", "cancelled"]}, "Filter."),
                       LIMIT, CURSOR, MINPOS],
        "responses": resp({"200": ok("A page.", listof("MateRequest")), "400": err("validation_failed.")})}},
    "/v1/me/mates": {"get": {"operationId": "listMates", "summary": "My mates: cards plus mates_since.",
        "parameters": [LIMIT, CURSOR, MINPOS],
        "responses": resp({"200": ok("A page.", listof("Mate")), "400": err("validation_failed.")})}},
    "/v1/me/mates/{user_id}": {"delete": {"operationId": "unpair", "summary": "Unpair.",
        "parameters": [idparam("user_id")],
        "responses": resp({"204": {"description": "Unpaired.", "headers": LOGPOS}, "404": err("not_mates.")})}},
    "/v1/walks": {"post": {"operationId": "sendWalk", "summary": "SendWalk to a current mate.",
        "parameters": [IDEM], "requestBody": body(ref("NewWalk")),
        "responses": resp({"201": ok("Sent; answerable until expires_at.", ref("Walk"), LOGPOS), **POST_ERRORS,
                           "409": err("not_mates.")})}},
    "/v1/walks/{id}/response": {"post": {"operationId": "respondWalk", "summary": "RespondWalk, by the addressee, before expires_at.",
        "parameters": [idparam(), IDEM], "requestBody": body(ref("WalkAnswer")),
        "responses": resp({"200": ok("Answered.", ref("Walk"), LOGPOS), **POST_ERRORS, "403": err("not_addressee."),
                           "404": err("No such walk (not_found)."), "409": err("already_answered."), "410": err("walk_expired.")})}},
    "/v1/walks/{id}": {
        "delete": {"operationId": "cancelWalk", "summary": "Cancel, by the sender, while pending.", "parameters": [idparam()],
                   "responses": resp({"200": ok("Cancelled.", ref("Walk"), LOGPOS), "403": err("not_sender."),
                                      "404": err("No such walk (not_found)."), "409": err("already_answered."),
                                      "410": err("walk_expired.")})},
        "get": {"operationId": "getWalk", "summary": "One walk, to its sender or addressee.", "parameters": [idparam(), MINPOS],
                "responses": resp({"200": ok("The walk.", ref("Walk")), "400": err("Bad Min-Log-Position."),
                                   "404": err("not_found.")})}},
    "/v1/me/walks": {"get": {"operationId": "listWalks", "summary": "My walks, newest first.",
        "parameters": [DIRECTION, param("status", "query", {"type": "string", "enum": ["pending", "accepted", "declined", "expired", "cancelled"]}, "Filter."),
                       LIMIT, CURSOR, MINPOS],
        "responses": resp({"200": ok("A page.", listof("Walk")), "400": err("validation_failed.")})}},
    "/v1/me/notifications": {"get": {"operationId": "listNotifications", "summary": "My inbox, newest first.",
        "parameters": [LIMIT, CURSOR, MINPOS],
        "responses": resp({"200": ok("A page.", listof("Notification")), "400": err("validation_failed.")})}},
    "/v1/me/notifications/{id}": {"delete": {"operationId": "dismissNotification", "summary": "Remove one entry from my inbox.",
        "parameters": [idparam()],
        "responses": resp({"204": {"description": "Removed.", "headers": LOGPOS}, "404": err("not_found.")})}},
    "/v1/me/notifications/stream": {"get": {"operationId": "streamNotifications",
        "summary": "Server-Sent Events: `event: notification`, one JSON entry per `data:`, id = log position; heartbeat comments.",
        "parameters": [param("Last-Event-ID", "header", POSITION, "Resume after this id.")],
        "responses": resp({"200": {"description": "An endless event stream.", "content": {"text/event-stream": {"schema": {"type": "string"}}}},
                           "400": err("Bad Last-Event-ID.")})}},
    "/healthz": {"get": {"operationId": "health", "summary": "200 while the process runs.", "security": PUBLIC,
        "responses": {"200": ok("Alive.", ref("Status"))}}},
    "/readyz": {"get": {"operationId": "ready", "summary": "200 once the database answers and the schema is current.", "security": PUBLIC,
        "responses": {"200": ok("Ready.", ref("Status")), "503": err("unavailable or schema_not_current.")}}},
    "/metrics": {"get": {"operationId": "metrics", "summary": "Prometheus text exposition.", "security": PUBLIC,
        "responses": {"200": {"description": "Metrics.", "content": {"text/plain": {"schema": {"type": "string"}}}}}}},
    "/openapi.json": {"get": {"operationId": "openapi", "summary": "This document.", "security": PUBLIC,
        "responses": {"200": {"description": "OpenAPI 3.1.", "content": {"application/json": {"schema": {"type": "object"}}}}}}},
    "/v1/admin/projections": {"get": {"operationId": "projections", "summary": "Each projector's checkpoint, lag and state (bearer SNIFFMEET_ADMIN_TOKEN).",
        "security": [{"adminToken": []}],
        "responses": {"200": ok("Projectors.", ref("Projections")), **COMMON}}},
}
doc = {"openapi": "3.1.0",
       "info": {"title": "SniffMeet API", "version": "1.0.0", "description": "The client contract of shared/API.md."},
       "servers": [{"url": "/"}],
       "security": [{"bearerAuth": []}],
       "paths": paths,
       "components": {"schemas": schemas, "securitySchemes": {
           "bearerAuth": {"type": "http", "scheme": "bearer"},
           "adminToken": {"type": "http", "scheme": "bearer", "description": "SNIFFMEET_ADMIN_TOKEN"}}}}
out = os.path.join(os.path.dirname(__file__), "..", "Sources", "Gateway", "openapi.json")
with open(out, "w") as f:
    json.dump(doc, f, indent=2)
    f.write("\n")
print("wrote", os.path.normpath(out))
