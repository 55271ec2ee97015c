"""Bytes moved to show an agent the first 64 KiB of a large dataset, three ways:

- this patch set: one ranged ``peek_dataset_content(offset=0, max_bytes=65536)``;
- stock Galaxy 26.1 MCP: ``download_dataset`` answers a URL, the agent GETs all of it;
- the standalone ``galaxy-mcp`` server: ``download_dataset(file_path=...)`` fetches the whole
  dataset from Galaxy to a local file, the agent then reads 64 KiB of it.

Bytes are counted on the wire by a relay in front of Galaxy (``ByteCountingProxy``), so HTTP
headers and MCP envelopes count too, plus what galaxy-mcp hands its client over stdio.
"""

from urllib.parse import urlsplit

from common import (
    ByteCountingProxy,
    timed,
    upload_by_url,
    write_tabular,
)
from galaxy_mcp_analysis.testing import (
    McpClient,
    rest,
)

import standalone_galaxy_mcp

MIB = 1024 * 1024
READ = 64 * 1024
FILE_NAME = "first-64k.tabular"


def prepare(galaxy, history_id: str, workdir, size_mib: int) -> tuple[str, int]:
    """Write the dataset file once per run and upload it to ``galaxy``; returns (dataset id, size)."""
    path = workdir / FILE_NAME
    size = path.stat().st_size if path.exists() else write_tabular(path, size_mib * MIB)
    seconds, dataset = timed(upload_by_url, galaxy, history_id, workdir, FILE_NAME)
    print(f"  dataset: {size / MIB:.0f} MiB tabular, uploaded in {seconds:.1f} s")
    return dataset["id"], size


def _mcp_path(galaxy) -> str:
    return urlsplit(galaxy.mcp_url).path


def _report(label: str, moved: int, shown: int, note: str = "") -> None:
    print(f"  {label}: {moved:,} bytes moved, {shown:,} bytes of content reach the agent{note}")


def patch_set(galaxy, dataset_id: str) -> dict:
    with ByteCountingProxy(galaxy.galaxy_url) as proxy, McpClient(proxy.url + _mcp_path(galaxy)) as mcp:
        proxy.reset()
        result = mcp.call_ok("peek_dataset_content", dataset_id=dataset_id, offset=0, max_bytes=READ,
                             api_key=galaxy.api_key)
        up, down = proxy.moved()
    figures = {"bytes_moved": up + down, "content_bytes": result["length"]}
    _report("this patch set, peek_dataset_content(offset=0, max_bytes=65536)", figures["bytes_moved"],
            figures["content_bytes"])
    return figures


def stock(galaxy, workdir, size_mib: int) -> dict:
    """On a stock Galaxy: download_dataset's URL, then the GET an agent must make to see any byte."""
    history_id = rest(galaxy.galaxy_url, "/api/histories", galaxy.api_key, {"name": "bench-bytes-stock"})["id"]
    dataset_id, _ = prepare(galaxy, history_id, workdir, size_mib)
    with ByteCountingProxy(galaxy.galaxy_url) as proxy, McpClient(proxy.url + _mcp_path(galaxy)) as mcp:
        proxy.reset()
        answer = mcp.call_ok("download_dataset", dataset_id=dataset_id, api_key=galaxy.api_key)
        answer = answer.get("result", answer)  # FastMCP wraps an untyped dict return under "result"
        url = urlsplit(answer["download_url"])
        body = rest_get_bytes(proxy.url + url.path + (f"?{url.query}" if url.query else ""), galaxy.api_key)
        up, down = proxy.moved()
    figures = {"bytes_moved": up + down, "download_bytes": body, "content_bytes": READ}
    _report("stock Galaxy MCP, download_dataset URL + GET", figures["bytes_moved"], READ,
            f" (the agent keeps 64 KiB of the {body:,} downloaded)")
    return figures


def rest_get_bytes(url: str, api_key: str) -> int:
    """GET ``url`` and count the body without keeping it (as a client streaming to disk would)."""
    import urllib.request

    request = urllib.request.Request(url, headers={"x-api-key": api_key})
    total = 0
    with urllib.request.urlopen(request, timeout=1800) as response:
        while chunk := response.read(MIB):
            total += len(chunk)
    return total


def standalone(script, galaxy, dataset_id: str, workdir) -> dict:
    """galaxy-mcp's download_dataset against the same Galaxy, to a file and to memory."""
    target = workdir / "galaxy-mcp-download.tabular"

    async def actions(client):
        tools = (await client.list_tools()).tools
        figures = {"tools": tools}
        for mode, arguments in (("file", {"file_path": str(target)}), ("memory", {})):
            proxy.reset()
            result = await client.call_tool("download_dataset", {"dataset_id": dataset_id, **arguments})
            if result.is_error:
                raise standalone_galaxy_mcp.Unavailable(
                    "galaxy-mcp download_dataset failed: " + " ".join(getattr(b, "text", "") for b in result.content))
            up, down = proxy.moved()
            figures[mode] = {"bytes_moved": up + down + standalone_galaxy_mcp.tool_result_bytes(result)}
        return figures

    with ByteCountingProxy(galaxy.galaxy_url) as proxy:
        figures = standalone_galaxy_mcp.session(script, proxy.url, galaxy.api_key, workdir / "galaxy-mcp", actions)
    with open(target, "rb") as downloaded:  # what the agent then reads to see the first 64 KiB
        shown = len(downloaded.read(READ))
    target.unlink()
    figures["file"]["content_bytes"] = shown
    figures["memory"]["content_bytes"] = 0
    _report("galaxy-mcp 1.12.0, download_dataset(file_path) + read 64 KiB", figures["file"]["bytes_moved"], shown)
    _report("galaxy-mcp 1.12.0, download_dataset() to memory", figures["memory"]["bytes_moved"], 0,
            " (to memory it reports the size only)")
    return figures
