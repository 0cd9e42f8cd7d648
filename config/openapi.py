"""The OpenAPI schema documents every answer the API gives, checked by schemathesis
(tests/api/test_openapi_schemathesis.py).

A postprocessing hook of drf-spectacular adds to each operation the answers every endpoint can give and no
view declares one by one, each a JSON ``{"detail": ...}``:

- 400: any request, when its address, a header or a cookie holds a NUL character (config/nul_characters.py),
  and where the operation takes input (query parameters or a body), for invalid input; where the view
  documents its own 400, that answer or ``{"detail"}``, since a request can be refused before its view
  runs (a NUL character in a query or form field; a body Django cannot read);
- 401 (no or a bad token: ``WWW-Authenticate: Token``), 403 (a role or an admission step missing);
- 404: an object the path or the input names does not exist (another researcher's study is 404 too);
- 413 for uploads over DIALEVAL_MAX_REQUEST_BYTES (config/request_limits.py);
- 429 from the rate limits (kernel/http/rate_limits.py) and 503 for a busy or full database
  (kernel/http/database_errors.py), both with ``Retry-After``.
"""

from __future__ import annotations

from typing import Any

ERROR = "ErrorDetail"
INVALID = "InvalidInput"
RETRY_AFTER = {
    "Retry-After": {"schema": {"type": "integer"}, "description": "seconds to wait before trying again"}
}
METHODS = {"get", "post", "put", "patch", "delete"}


def _error(description: str, headers: dict[str, Any] | None = None) -> dict[str, Any]:
    response: dict[str, Any] = {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{ERROR}"}}},
    }
    if headers:
        response["headers"] = headers
    return response


def document_common_errors(
    result: dict[str, Any], generator: Any, request: Any, public: bool
) -> dict[str, Any]:
    """POSTPROCESSING_HOOKS entry: see the module docstring."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas[ERROR] = {"type": "object", "properties": {"detail": {"type": "string"}}, "required": ["detail"]}
    # DRF's 400: {"detail": ...} for a body that is not JSON, else {field: [messages]} per field at fault.
    schemas[INVALID] = {
        "type": "object",
        "description": '{"detail": "..."} or, per field at fault, {"<field>": ["<message>", ...]}',
        "additionalProperties": True,
    }
    for operations in result.get("paths", {}).values():
        for method, operation in operations.items():
            if method not in METHODS:
                continue
            responses = operation.setdefault("responses", {})
            parameters = operation.get("parameters", [])
            takes_input = "requestBody" in operation or any(p.get("in") == "query" for p in parameters)
            added = {
                "401": _error("authentication required: no token, or an invalid one"),
                "403": _error("not allowed for this account"),
                "429": _error("too many requests", RETRY_AFTER),
                "503": _error("the database is busy or full; nothing was saved", RETRY_AFTER),
            }
            if takes_input:
                added["400"] = _error("invalid input")
                added["400"]["content"]["application/json"]["schema"] = {
                    "$ref": f"#/components/schemas/{INVALID}"
                }
                added["415"] = _error("a request body of a type the endpoint does not read")
            else:
                added["400"] = _error("the address, a header or a cookie holds a NUL character")
            # Any operation: an object named in the path, or one its input names (a study, a model), may not
            # exist or may not be the requester's.
            added["404"] = _error("no such object, or not yours")
            if "multipart/form-data" in operation.get("requestBody", {}).get("content", {}):
                added["413"] = _error("the upload is larger than the server accepts")
            if "400" in responses:
                _or_detail(responses["400"])
            for code, response in added.items():
                responses.setdefault(code, response)
    return result


def _or_detail(response: dict[str, Any]) -> None:
    """A view's own 400 widened to its answer or the ``{"detail"}`` of a request refused before the view."""
    for media in response.get("content", {}).values():
        schema = media.get("schema")
        generic = [{"$ref": f"#/components/schemas/{name}"} for name in (ERROR, INVALID)]
        if schema is not None and schema not in generic:
            media["schema"] = {"anyOf": [schema, generic[0]]}
