"""How the processes of a job find each other when no MPI launcher started them (torchrun's
environment, ``init_method``): a small key-value store (PyTorch's ``TCPStore`` and
``FileStore``) through which rank 0 hands out what the backend needs to connect, NCCL's unique
id. Only that id goes through it: the tensors travel over NCCL."""
from __future__ import annotations

import json
import os
import socket
import socketserver
import threading
import time
import urllib.parse


class TCPStore:
    """``set``/``get`` of small values; rank 0 (``is_master``) serves them at host:port; ``get``
    waits for a key until ``timeout`` seconds."""

    def __init__(self, host_name, port, world_size=None, is_master=False, timeout=300.0):
        self.host, self.port, self.timeout = host_name, int(port), float(timeout)
        self._server = None
        if is_master:
            data, cond = {}, threading.Condition()

            class Handler(socketserver.StreamRequestHandler):
                def handle(self):
                    for line in self.rfile:
                        req = json.loads(line)
                        with cond:
                            if req["op"] == "set":
                                data[req["key"]] = req["value"]
                                cond.notify_all()
                                reply = {"ok": True}
                            else:
                                cond.wait_for(lambda k=req["key"]: k in data, req["timeout"])
                                reply = {"value": data.get(req["key"])}
                        self.wfile.write((json.dumps(reply) + "\n").encode())

            class Server(socketserver.ThreadingTCPServer):
                allow_reuse_address, daemon_threads = True, True
            self._server = Server(("", self.port), Handler)
            threading.Thread(target=self._server.serve_forever, daemon=True).start()
        self._sock = self._connect()
        self._file = self._sock.makefile("rwb")

    def _connect(self):
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                return socket.create_connection((self.host, self.port), timeout=self.timeout)
            except OSError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"could not reach the rendezvous at {self.host}:"
                                       f"{self.port} within {self.timeout:g} s") from None
                time.sleep(0.1)

    def _ask(self, req):
        self._file.write((json.dumps(req) + "\n").encode())
        self._file.flush()
        return json.loads(self._file.readline())

    def set(self, key, value) -> None:
        self._ask({"op": "set", "key": key, "value": value})

    def get(self, key):
        value = self._ask({"op": "get", "key": key, "timeout": self.timeout})["value"]
        if value is None:
            raise TimeoutError(f"rendezvous: no rank set '{key}' within {self.timeout:g} s")
        return value


class FileStore:
    """The same on a file every process can read (``file://path``)."""

    def __init__(self, file_name, world_size=None, timeout=300.0):
        self.path, self.timeout = file_name, float(timeout)

    def set(self, key, value) -> None:
        tmp = f"{self.path}.{key}.{os.getpid()}"
        with open(tmp, "w") as f:
            json.dump(value, f)
        os.replace(tmp, f"{self.path}.{key}")

    def get(self, key):
        deadline = time.monotonic() + self.timeout
        while not os.path.exists(f"{self.path}.{key}"):
            if time.monotonic() > deadline:
                raise TimeoutError(f"rendezvous: no rank set '{key}' within {self.timeout:g} s")
            time.sleep(0.05)
        with open(f"{self.path}.{key}") as f:
            return json.load(f)


def store_for(init_method, rank, world_size, timeout):
    """The store of ``init_method``: ``env://`` (MASTER_ADDR, MASTER_PORT, the default),
    ``tcp://host:port`` or ``file://path``."""
    url = urllib.parse.urlparse(init_method or "env://")
    if url.scheme == "file":
        return FileStore(url.path, world_size, timeout)
    if url.scheme == "tcp":
        host, port = url.hostname, url.port
    elif url.scheme == "env":
        host, port = os.environ.get("MASTER_ADDR"), os.environ.get("MASTER_PORT")
        if host is None or port is None:
            raise ValueError("env:// rendezvous needs MASTER_ADDR and MASTER_PORT set (as "
                             "torchrun sets them)")
    else:
        raise ValueError(f"unknown init_method {init_method!r}: expected env://, "
                         "tcp://host:port or file://path")
    return TCPStore(host, port, world_size, is_master=rank == 0, timeout=timeout)
