"""The reference web client: plain HTML, CSS and JS modules shipped in the package.

The pages use only the public ``/v1`` API (they prove it is enough); the server's part is
to hand out the files. A seat's token travels in the URL fragment, which browsers never
send, so it reaches neither these routes nor the logs.
"""

from pathlib import Path

STATIC = Path(__file__).parent / "static"
