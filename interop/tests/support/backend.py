"""interop/clients/backend.py: a backend service registered through py-eureka-client, with a
zone and metadata, answering ``GET /who`` with its instance id."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

from . import procs


class Backend(procs.ClientApp):
    kind = "backend"
    startup_timeout = 30.0

    def __init__(self, app: str, instance_id: str, server: procs.RegistryServer, log_dir: Path,
                 zone: str = "", metadata: Optional[dict] = None):
        super().__init__(app, server, log_dir, metadata=metadata)
        self._instance_id = instance_id
        self.zone = zone
        self.proc.name = f"backend-{instance_id}"

    @property
    def instance_id(self) -> str:
        return self._instance_id

    def ready_path(self) -> str:
        return "/who"

    def argv(self) -> list[str]:
        py = str(procs.VENV_PYTHON) if procs.VENV_PYTHON.exists() else sys.executable
        return [py, "-u", str(procs.CLIENTS_DIR / "backend.py"), "--server", self.server.base_url,
                "--app", self.app_name, "--port", str(self.port), "--instance-id", self._instance_id,
                "--zone", self.zone, "--metadata", json.dumps(self.metadata)]
