"""The MCP Python SDK's Client in the session mode (mode="legacy": initialize, then a session with
Mcp-Session-Id): lists the tools and calls one. python docs/examples/json-rpc/client.py URL"""
import asyncio
import sys

from mcp import Client


async def main():
    async with Client(sys.argv[1], mode="legacy", read_timeout_seconds=10) as client:
        tools = await client.list_tools()
        result = await client.call_tool("add", {"a": 2, "b": 3})
        print([tool.name for tool in tools.tools], result.content[0].text)


asyncio.run(main())
