# ruff: noqa: B018  (each line is a use of a name, for vulture)
"""Names that frameworks call or read, which vulture cannot see used (tools/dead_code.py reads this file with the
code). One line per name: vulture counts any use of a name, so `_.name` keeps every definition of it."""

from vulture.whitelist_utils import Whitelist

_ = Whitelist()

# FastAPI routes (registered by their decorators) and Starlette's router setting.
_.signed_out
_.audit_export
_.loop_health
_.client_metadata
_.redirect_slashes

# uvicorn: `Server` methods and attributes webhost overrides or sets.
_.capture_signals
_.should_exit

# pydantic: model settings, field and model validators (called by the models), fields read by the schema.
_.model_config
_._remember_expansions
_._infer_transport
_._known_transport
_._command_for_stdio
_._url_for_http
_._inputs_declared
_._identity_providers
_._access_names_configured
_._name_entries
_._complete
_._unique_ids
_._split_origins
_._usable_database
_.timeouts
_.result_type

# The MCP SDK: a client extension's identifier, a request's Mcp-Name parameter, token storage callbacks.
_.identifier
_.name_param
_.get_client_info
_.set_client_info

# The demo servers' tools, resources and prompts (registered by `@mcp.tool` and the like), and a field its app reads.
_.register_user
_.connect_account
_.pick_color
_.get_weather
_.count_slowly
_.generate_image
_.play_tone
_.plan_trip
_.divide
_.readme
_.trip_planner
_.explain_tool
_.show_dashboard
_.dashboard_refresh
_.generatedAt

# TypedDict keys that the page reads (a field of an elicitation schema).
_.minLength
_.maxLength
_.minimum
_.maximum
_.minItems
_.maxItems
_.inputType

# A dataclass field the transcript fills (and its JSON export names).
_.ended_at

# The testing kit's public API (webhost.testing: for the tests of other projects too) and its pytest hook.
_.login_url
_.decline
_.pytest_configure

# io: what a buffered reader calls on a raw file object of webhost's own (upload_spool.py, read by Pillow).
_.readable
_.seekable
_.readinto

# Alembic reads these from every migration.
_.down_revision
_.branch_labels
_.depends_on
_.downgrade

# Read by name from the dataclass's fields (transcript.py's to_wire/from_wire), never as an attribute.
_.from_prompt
