"""A real MCP server (the MCP Python SDK's MCPServer) with one tool, over streamable HTTP at /mcp:
python docs/examples/json-rpc/server.py [PORT] (default 8000). Ctrl-C stops it."""
import logging
import sys

import uvicorn
from mcp.server.mcpserver import MCPServer

app = MCPServer("demo")


@app.tool()
def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b


logging.getLogger("mcp").setLevel(logging.WARNING)  # quiet in a shared terminal: no line per session
port = int(sys.argv[1]) if len(sys.argv) > 1 else 8000
print(f"MCP server on http://127.0.0.1:{port}/mcp", flush=True)
uvicorn.run(app.streamable_http_app(), host="127.0.0.1", port=port, log_level="warning")
