"""Loopback ports: a free one, and waiting for a server to listen on one."""
import socket
import time


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(port, timeout=15):
    """True once something accepts TCP connections on 127.0.0.1:`port`; False after `timeout` s."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.1)
    return False
