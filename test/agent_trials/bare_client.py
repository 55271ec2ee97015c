"""A bare MCP client for agent trials: the server's instructions, tools/list and tool results, nothing else.

usage: mcp list [NAME...]            tools/list (name, description, input schema); with names, only those
       mcp call TOOL '{"arg": ...}'  call one tool; prints what the server returned (isError, content)
Reads the server URL and the API key from $TRIAL_ENV (a JSON file: {"url":..., "api_key":...}).
"""
import asyncio, base64, json, os, sys

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

CONF_PATH = os.environ["TRIAL_ENV"]
CONF = json.load(open(CONF_PATH))
LOG = CONF.get("log")


def shown(block):
    """A text block as text; an image block saved to a file beside the log, as a multimodal client shows it."""
    if block.type == "text":
        return block.text
    if block.type == "image":
        folder = os.path.dirname(os.path.abspath(LOG or CONF_PATH))
        suffix = block.mime_type.split("/")[-1]
        index = len([name for name in os.listdir(folder) if name.startswith("image-")]) + 1
        path = os.path.join(folder, f"image-{index}.{suffix}")
        with open(path, "wb") as out:
            out.write(base64.b64decode(block.data))
        return {"image_saved_to": path, "mimeType": block.mime_type}
    return block.model_dump()


async def main(argv):
    async with httpx2.AsyncClient(headers={"x-api-key": CONF["api_key"]}, timeout=300) as http:
        async with streamable_http_client(CONF["url"], http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                opened = await session.initialize()
                if argv[0] == "list":
                    if len(argv) == 1 and opened.instructions:
                        print(json.dumps({"server_instructions": opened.instructions}, indent=1))
                    tools = (await session.list_tools()).tools
                    for tool in tools:
                        if len(argv) > 1 and tool.name not in argv[1:]:
                            continue
                        print(json.dumps({"name": tool.name, "description": tool.description,
                                          "annotations": tool.annotations.model_dump(exclude_none=True) if tool.annotations else None,
                                          "inputSchema": tool.input_schema}, indent=1))
                    return
                if argv[0] == "call":
                    args = json.loads(argv[2]) if len(argv) > 2 else {}
                    result = await session.call_tool(argv[1], args)
                    out = {"isError": result.is_error, "content": [shown(c) for c in result.content]}
                    text = json.dumps(out, indent=1)
                    print(text)
                    if LOG:
                        with open(LOG, "a") as log:
                            log.write(json.dumps({"tool": argv[1], "arguments": args, "isError": result.is_error,
                                                  "result": out["content"]}) + "\n")
                    return
                sys.exit(__doc__)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    asyncio.run(main(sys.argv[1:]))
