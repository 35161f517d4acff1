"""Downlinks capped on the namespace's loopback: what reaches chosen UDP ports goes through htb
classes of their own, everything else is unshaped (run.sh runs the gates in a network namespace of
their own, so the shaping reaches nothing else)."""
import re
import subprocess
import threading

from .network import sh


class DownlinkCap:
    """Each receiver in `receivers` — (label, address, port_of), `port_of()` giving the UDP port
    its media arrives on, or None before it has one — gets a `kbit` htb class with a 40-packet
    queue on lo, matched on the destination address and port. The ports are read twice a second
    and each filter follows its receiver's, should its pair change. `report()` says which ports it
    held and what each class carried and dropped (a cap whose class carried nothing held nothing:
    `held()` is false)."""

    def __init__(self, kbit, receivers):
        self.kbit = kbit
        self.receivers = list(receivers)
        self.ports = {label: [] for label, _, _ in self.receivers}
        self.figures = {}
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._follow, daemon=True)
        sh("tc qdisc replace dev lo root handle 1: htb default 10")
        sh("tc class replace dev lo parent 1: classid 1:10 htb rate 10gbit")
        for index in range(len(self.receivers)):
            cls = 20 + index
            sh(f"tc class replace dev lo parent 1: classid 1:{cls} htb rate {kbit}kbit ceil {kbit}kbit burst 16k")
            sh(f"tc qdisc replace dev lo parent 1:{cls} handle {cls}: pfifo limit 40")
        self.thread.start()

    def _follow(self):
        while not self.done.wait(0.5):
            for index, (label, address, port_of) in enumerate(self.receivers):
                port = port_of()
                held = self.ports[label]
                if port and (not held or held[-1] != port):
                    prio = 1 + index
                    subprocess.run(["tc", "filter", "del", "dev", "lo", "parent", "1:", "prio", str(prio)],
                                   stderr=subprocess.DEVNULL)
                    sh(f"tc filter add dev lo parent 1: protocol ip prio {prio} u32 match ip dst {address}/32 "
                       f"match ip dport {port} 0xffff flowid 1:{20 + index}")
                    held.append(port)

    def carried(self, label):
        """(packets, dropped) through `label`'s class so far."""
        index = [r[0] for r in self.receivers].index(label)
        out = subprocess.run(["tc", "-s", "class", "show", "dev", "lo", "classid", f"1:{20 + index}"],
                             capture_output=True, text=True).stdout
        match = re.search(r"Sent \d+ bytes (\d+) pkt \(dropped (\d+)", out)
        return (int(match.group(1)), int(match.group(2))) if match else (0, 0)

    def stop(self):
        """Stops following, reads the classes and removes the shaping."""
        self.done.set()
        self.thread.join(timeout=5)
        self.figures = {label: self.carried(label) for label, _, _ in self.receivers}
        subprocess.run(["tc", "qdisc", "del", "dev", "lo", "root"], stderr=subprocess.DEVNULL)

    def held(self, label):
        """The cap held `label`'s port and its class carried packets (after `stop()`)."""
        return bool(self.ports[label]) and self.figures.get(label, (0, 0))[0] > 0

    def report(self, label=None):
        labels = [label] if label else [r[0] for r in self.receivers]
        parts = []
        for name in labels:
            packets, dropped = self.figures.get(name, (0, 0))
            parts.append(f"{name}: ports {self.ports[name]}, {packets} packets through the {self.kbit} kbit/s class, "
                         f"{dropped} dropped")
        return "; ".join(parts)
