"""The MCP face of kprof-mcp, under ``server.py``'s wiring: the tool input/output models
(:mod:`.io`), the error policy every tool runs under (:mod:`.errors`), waiting on jobs and answering
with their results (:mod:`.waiting`), the tools themselves by group (:mod:`.tools_profile`,
:mod:`.tools_batch`, :mod:`.tools_info`), and the streamable-HTTP transport's authentication and
disconnect watch (:mod:`.http`). Every tool validates through the engine and returns a pydantic
model plus a text block; no torch or triton is imported here."""
