"""The namespace's loopback made lossy with nftables (run.sh runs the gates in a network namespace
of their own, so these rules reach nothing else). Each drop is a table of its own; `table` names it."""
import subprocess

from .paths import ROOT


def sh(command):
    """Runs a shell command in ROOT; a failure raises."""
    subprocess.run(command, shell=True, check=True, cwd=ROOT)


def drop_udp(percent, table="sharectl_gate", to_ports=None):
    """Drops `percent` of UDP on lo at random (100: all of it), on the way in: the sender's
    sendmsg succeeds and the datagram vanishes, as on a real lossy path (dropped on the way out,
    the sender would get EPERM, which libnice takes for a broken pair). `to_ports`, a (first,
    last) pair, drops only datagrams to those ports: one direction of a path whose far end's
    ports are known (lib/janus.py's RTP_PORTS)."""
    clear_drops(table)
    sh(f"nft add table inet {table}")
    sh(f"nft add chain inet {table} in '{{ type filter hook input priority 0; }}'")
    match = f"udp dport {to_ports[0]}-{to_ports[1]}" if to_ports else "meta l4proto udp"
    rule = f"{match} drop" if percent >= 100 else f"{match} numgen random mod 100 \\< {percent} drop"
    sh(f"nft add rule inet {table} in {rule}")


def drop_media(table="sharectl_gate"):
    """Drops every RTP and RTCP datagram on lo (UDP payloads starting with version 2, RFC 7983)
    and lets STUN and DTLS through: the media stops while connectivity checks go on answering."""
    clear_drops(table)
    sh(f"nft add table inet {table}")
    sh(f"nft add chain inet {table} in '{{ type filter hook input priority 0; }}'")
    sh(f"nft add rule inet {table} in meta l4proto udp @th,64,2 == 2 drop")


def clear_drops(table="sharectl_gate"):
    """Takes the table away (nothing happens if there is none)."""
    subprocess.run(f"nft delete table inet {table}", shell=True, cwd=ROOT, stderr=subprocess.DEVNULL)
